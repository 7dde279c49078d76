package io.cassandrajournal.serialization;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.annotation.JsonDeserialize;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.UnknownPayloadTypeException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Declared upcaster steps ({@link PropertyUpcaster}): each kind of change on the token stream, the same result as
 * the tree gives for the same steps, chains that mix them with general steps, and the errors they give.
 */
class PropertyUpcasterTest {

	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
	@JsonSubTypes({ @JsonSubTypes.Type(value = Added.class, name = "added"),
			@JsonSubTypes.Type(value = Noted.class, name = "noted"), @JsonSubTypes.Type(value = Bean.class, name = "bean") })
	sealed interface Event permits Added, Noted, Bean {
	}

	@PayloadVersion(3)
	record Added(long cents, String currency) implements Event {
	}

	@PayloadVersion(2)
	record Noted(String to, boolean flagged) implements Event {
	}

	/** A class bound through setters (Jackson's other bean path), at version 2. */
	@PayloadVersion(2)
	static final class Bean implements Event {

		private long cents;

		private String note = "";

		public void setCents(long cents) {
			this.cents = cents;
		}

		public void setNote(String note) {
			this.note = note;
		}

		@Override
		public String toString() {
			return "Bean[cents=" + this.cents + ", note=" + this.note + "]";
		}

	}

	private static JacksonEventSerializer serializer(EventUpcaster... steps) {
		return new JacksonEventSerializer(Upcasters.builder().addAll(List.of(steps)).build());
	}

	/** The same steps as general ones, so that the serializer runs them on the tree. */
	private static JacksonEventSerializer onTheTree(EventUpcaster... steps) {
		Upcasters.Builder builder = Upcasters.builder();
		for (EventUpcaster step : steps) {
			builder.add(EventUpcaster.splitting(step.kind(), step.fromVersion(), step::upcast));
		}
		return new JacksonEventSerializer(builder.build());
	}

	private static List<Object> read(JacksonEventSerializer serializer, String json) {
		return serializer.deserializeEvent(json, Object.class);
	}

	@Test
	void aRenamedPropertyKeepsItsPlaceAndDropsOneThatHadItsName() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("x", 1, "amt", "amount"));
		assertThat(read(serializer, "{\"kind\":\"x\",\"amt\":5,\"z\":1}")).hasToString("[{kind=x, amount=5, z=1}]");
		assertThat(read(serializer, "{\"kind\":\"x\",\"amount\":1,\"amt\":{\"amt\":2},\"z\":1}"))
			.as("an existing 'amount' dropped, the nested 'amt' kept")
			.hasToString("[{kind=x, amount={amt=2}, z=1}]");
	}

	@Test
	void aRemovedPropertyGoesWhateverItsValueAndNestedOnesOfThatNameStay() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.removing("x", 1, "old", "older"));
		assertThat(read(serializer, "{\"old\":[1,{\"old\":2}],\"kind\":\"x\",\"n\":{\"old\":3},\"older\":null}"))
			.hasToString("[{kind=x, n={old=3}}]");
	}

	@Test
	void addedPropertiesComeLastInTheirOrderReplacingOnesOfTheirName() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.adding("x", 1, "currency", "EUR")
			.adding("count", 7)
			.adding("flag", true)
			.adding("nested", JsonNodeFactory.instance.objectNode().put("a", 1).set("b",
					JsonNodeFactory.instance.arrayNode().add(2).add(JsonNodeFactory.instance.objectNode().put("c", 3)))));
		assertThat(read(serializer, "{\"kind\":\"x\",\"count\":1,\"z\":{}}"))
			.hasToString("[{kind=x, z={}, currency=EUR, count=7, flag=true, nested={a=1, b=[2, {c=3}]}}]");
		assertThat(read(serializer, "{\"kind\":\"x\"}")).as("an event with the kind only")
			.hasToString("[{kind=x, currency=EUR, count=7, flag=true, nested={a=1, b=[2, {c=3}]}}]");
	}

	@Test
	void aRenamedKindContinuesWithTheChainOfItsNewKindWhereverTheKindStands() {
		JacksonEventSerializer serializer = serializer(
				EventUpcaster.renamingKind("deposited", 1, "added").renaming("euros", "cents"),
				EventUpcaster.adding("added", 2, "currency", "EUR"));
		assertThat(serializer.deserializeEvent("{\"kind\":\"deposited\",\"euros\":5}", Event.class))
			.containsExactly(new Added(5, "EUR"));
		assertThat(serializer.deserializeEvent("{\"euros\":5,\"kind\":\"deposited\"}", Event.class))
			.as("the kind after the other properties").containsExactly(new Added(5, "EUR"));
		assertThat(read(serializer, "{\"euros\":5,\"kind\":\"deposited\",\"z\":true}"))
			.hasToString("[{cents=5, kind=added, z=true, currency=EUR}]");
	}

	@Test
	void aLaterStepSeesWhatAnEarlierOneAdded() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.adding("noted", 1, "recipient", "bob"),
				EventUpcaster.renaming("noted", 2, "recipient", "to").adding("flagged", true),
				EventUpcaster.removing("noted", 3, "z"));
		assertThat(read(serializer, "{\"kind\":\"noted\",\"z\":1}")).hasToString("[{kind=noted, to=bob, flagged=true}]");
	}

	@Test
	void aStampedPayloadLosesItsVersionBeforeTheSteps() {
		JacksonEventSerializer strict = new JacksonEventSerializer(
				JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build(),
				Upcasters.builder().add(EventUpcaster.adding("added", 2, "currency", "EUR")).build());
		assertThat(strict.deserializeEvent("{\"kind\":\"added\",\"cents\":5,\"_version\":2}", Event.class))
			.as("stamped at the end, read by a strict mapper").containsExactly(new Added(5, "EUR"));
		assertThat(strict.deserializeEvent("{\"kind\":\"added\",\"cents\":5,\"currency\":\"CHF\",\"_version\":3}",
				Event.class))
			.as("at the chain's end: no step").containsExactly(new Added(5, "CHF"));
	}

	@Test
	void aStampNotAtTheEndIsFoundAndTheDeclaredStepsRunFromIt() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("x", 1, "a", "b"),
				EventUpcaster.properties("x", 2).adding("upcast", true));
		assertThat(read(serializer, "{\"kind\":\"x\",\"_version\":2,\"a\":1}"))
			.as("stamped at version 2 before another property: only the v2 step runs")
			.hasToString("[{kind=x, a=1, upcast=true}]");
		assertThat(read(serializer, "{\"kind\":\"x\",\"a\":1,\"_version\":2}")).as("the same stamp at the end")
			.hasToString("[{kind=x, a=1, upcast=true}]");
		assertThat(read(serializer, "{\"kind\":\"x\",\"a\":{\"_version\":7}}"))
			.as("a nested version property is no stamp: version 1").hasToString("[{kind=x, b={_version=7}, upcast=true}]");
	}

	/**
	 * A version property whose name is written with JSON escapes (backslash-u005f for its underscore, say: it is
	 * {@code _version} to every JSON reader) is a stamp: the declared steps run from its version, not from version 1,
	 * and a strict mapper does not see it. The text's quick looks for {@code "_version"} used to miss it
	 * (docs/reliability.md, finding 31). An escaped type property was found already (the kind is then read with a
	 * parser).
	 */
	@Test
	void aStampWhoseNameIsWrittenWithEscapesIsFoundAndTheDeclaredStepsRunFromIt() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("x", 1, "a", "b"),
				EventUpcaster.properties("x", 2).adding("upcast", true));
		assertThat(read(serializer, "{\"kind\":\"x\",\"a\":1,\"\\u005Fversion\":2}")).as("at the end")
			.hasToString("[{kind=x, a=1, upcast=true}]");
		assertThat(read(serializer, "{\"kind\":\"x\",\"\\u005f\\u0076ersion\":2,\"a\":1}"))
			.as("before another property")
			.hasToString("[{kind=x, a=1, upcast=true}]");
		assertThat(read(serializer, "{\"\\u006bind\":\"x\",\"a\":1}")).as("an escaped type property, version 1")
			.hasToString("[{kind=x, b=1, upcast=true}]");
		JacksonEventSerializer strict = new JacksonEventSerializer(
				JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build(),
				Upcasters.builder().add(EventUpcaster.adding("added", 2, "currency", "EUR")).build());
		assertThat(strict.deserializeEvent("{\"kind\":\"added\",\"cents\":5,\"\\u005fversion\":2}", Event.class))
			.as("a chain from version 2, a strict mapper").containsExactly(new Added(5, "EUR"));
	}

	@Test
	void theTokenStreamGivesWhatTheTreeGivesForTheSameSteps() {
		EventUpcaster[] steps = { EventUpcaster.renamingKind("deposited", 1, "added").renaming("euros", "cents")
			.removing("legacy"), EventUpcaster.adding("added", 2, "currency", "EUR").adding("n", 1) };
		JacksonEventSerializer streaming = serializer(steps);
		JacksonEventSerializer tree = onTheTree(steps);
		for (String json : List.of("{\"kind\":\"deposited\",\"euros\":5}", "{\"euros\":5,\"kind\":\"deposited\"}",
				"{\"kind\":\"deposited\",\"legacy\":{\"euros\":1},\"euros\":5,\"cents\":9,\"currency\":\"X\"}",
				"{\"kind\":\"deposited\",\"euros\":5,\"_version\":1}", "{\"kind\":\"added\",\"cents\":5,\"_version\":2}",
				"{ \"kind\" : \"deposited\" , \"euros\" : [1, {\"euros\": 2}] }", "{\"kind\":\"other\",\"euros\":1}")) {
			assertThat(read(streaming, json)).as(json).hasToString(read(tree, json).toString());
			assertThat(streaming.deserializeEvent(json, JsonNode.class)).as(json)
				.isEqualTo(tree.deserializeEvent(json, JsonNode.class));
		}
		assertThat(streaming.deserializeEvent("{\"kind\":\"deposited\",\"euros\":5}", Event.class))
			.isEqualTo(tree.deserializeEvent("{\"kind\":\"deposited\",\"euros\":5}", Event.class))
			.containsExactly(new Added(5, "EUR"));
	}

	@Test
	void aBeanBoundThroughSettersSeesTheRenamedProperties() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("bean", 1, "amount", "cents")
			.renaming("text", "note"));
		assertThat(serializer.deserializeEvent("{\"kind\":\"bean\",\"amount\":4,\"text\":\"hi\"}", Event.class))
			.hasToString("[Bean[cents=4, note=hi]]");
		assertThat(serializer.deserializeEvent("{\"amount\":4,\"text\":\"hi\",\"kind\":\"bean\"}", Event.class))
			.as("the kind last: Jackson buffers the properties before it").hasToString("[Bean[cents=4, note=hi]]");
	}

	/** Read by an application's deserializer that takes the event as a tree. */
	@PayloadVersion(2)
	@JsonDeserialize(using = TreeReading.Deserializer.class)
	record TreeReading(long cents, String note) {

		static final class Deserializer extends ValueDeserializer<TreeReading> {

			@Override
			public TreeReading deserialize(JsonParser parser, DeserializationContext context) {
				JsonNode tree = parser.readValueAsTree();
				return new TreeReading(tree.path("cents").asLong(-1), tree.path("note").asString("missing"));
			}

		}

	}

	/** Read by an application's deserializer that binds the event to a map first. */
	@PayloadVersion(2)
	@JsonDeserialize(using = MapReading.Deserializer.class)
	record MapReading(Object cents, Object note, @Nullable Object version) {

		static final class Deserializer extends ValueDeserializer<MapReading> {

			@Override
			public MapReading deserialize(JsonParser parser, DeserializationContext context) {
				Map<?, ?> map = parser.readValueAs(Map.class);
				return new MapReading(map.get("cents"), map.get("note"), map.get("_version"));
			}

		}

	}

	/**
	 * An application's deserializer that reads the event through {@code readValueAsTree()} or {@code readValueAs(..)}
	 * sees what the steps give: those calls used to go to the stored text's parser under the steps, so they saw the
	 * stored shape with no step applied.
	 */
	@Test
	void aDeserializerThatReadsATreeOrAMapSeesWhatTheStepsGive() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("r", 1, "amount", "cents")
			.renaming("text", "note"));
		String stored = "{\"kind\":\"r\",\"amount\":4,\"text\":\"hi\"}";
		assertThat(serializer.deserializeEvent(stored, TreeReading.class)).containsExactly(new TreeReading(4, "hi"));
		assertThat(serializer.deserializeEvent(stored, MapReading.class)).containsExactly(new MapReading(4, "hi", null));
		String stamped = "{\"kind\":\"r\",\"amount\":4,\"text\":\"hi\",\"_version\":1}";
		assertThat(serializer.deserializeEvent(stamped, TreeReading.class)).containsExactly(new TreeReading(4, "hi"));
		assertThat(serializer.deserializeEvent(stamped, MapReading.class)).containsExactly(new MapReading(4, "hi", null));
		String current = "{\"kind\":\"r\",\"cents\":4,\"note\":\"hi\",\"_version\":2}";
		assertThat(serializer.deserializeEvent(current, MapReading.class)).as("at the current version: no version seen")
			.containsExactly(new MapReading(4, "hi", null));
	}

	@Test
	void aChainWithAGeneralStepRunsTheDeclaredOnesOnTheTree() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("noted", 1, "recipient", "to"),
				EventUpcaster.of("noted", 2, (event) -> event.put("flagged", event.get("to").asString().equals("bob"))));
		assertThat(serializer.deserializeEvent("{\"kind\":\"noted\",\"recipient\":\"bob\"}", Event.class))
			.containsExactly(new Noted("bob", true));
		assertThat(serializer.deserializeEvent("{\"kind\":\"noted\",\"to\":\"ann\",\"_version\":2}", Event.class))
			.as("from version 2: the general step alone").containsExactly(new Noted("ann", false));
	}

	@Test
	void aThrowingGeneralStepAfterADeclaredOneIsNamedInTheError() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renaming("noted", 1, "recipient", "to"),
				EventUpcaster.of("noted", 2, (event) -> {
					throw new IllegalArgumentException("no flag for " + event.get("to"));
				}));
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> serializer.deserializeEvent("{\"kind\":\"noted\",\"recipient\":\"bob\"}", Event.class))
			.withMessageContaining("Upcaster 'noted v2->v3' (kind 'noted', version 2) failed")
			.withMessageContaining("no flag for \"bob\"");
	}

	@Test
	void aChainThatEndsBelowTheClassVersionNamesTheKindItReached() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renamingKind("deposited", 1, "added"));
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> serializer.deserializeEvent("{\"kind\":\"deposited\",\"cents\":5}", Event.class))
			.withMessageContaining("kind 'added' is at version 2")
			.withMessageContaining(Added.class.getName() + " is at version 3")
			.withMessageContaining("no upcaster reads kind 'added' at version 2");
	}

	@Test
	void whatTheStepsGiveFailsToBindAsOnTheTree() {
		JacksonEventSerializer serializer = serializer(EventUpcaster.renamingKind("deposited", 1, "unknown"),
				EventUpcaster.renaming("noted", 1, "count", "to"));
		assertThatExceptionOfType(UnknownPayloadTypeException.class)
			.isThrownBy(() -> serializer.deserializeEvent("{\"kind\":\"deposited\",\"cents\":5}", Event.class))
			.withMessageContaining("unknown");
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> serializer.deserializeEvent("{\"kind\":\"noted\",\"count\":{\"a\":1}}", Event.class))
			.withMessageContaining("Cannot read stored payload as " + Event.class.getName())
			.withMessageContaining("{\"kind\":\"noted\",\"count\":{\"a\":1}}");
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> serializer.deserializeEvent("{\"kind\":\"noted\",\"count\":", Event.class))
			.withMessageContaining("Cannot read stored payload");
	}

	@Test
	void aStepChangesEachNameOnceAndLeavesTheReservedOnesAlone() {
		PropertyUpcaster step = EventUpcaster.renaming("x", 1, "a", "b");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> step.removing("b"))
			.withMessageContaining("Upcaster x v1->v2 changes property 'b' twice");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> step.adding("a", 1))
			.withMessageContaining("changes property 'a' twice");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> step.renaming("c", "c"))
			.withMessageContaining("renames 'c' to itself");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> step.adding(Upcasters.VERSION_PROPERTY, 2))
			.withMessageContaining("reserved property _version");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> step.renamingKind("y").renamingKind("z"))
			.withMessageContaining("already renames the kind to 'y'");
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> Upcasters.builder().typeProperty("type").add(EventUpcaster.removing("x", 1, "type")).build())
			.withMessageContaining("type property 'type'")
			.withMessageContaining("renamingKind");
		assertThat(read(serializer(step), "{\"kind\":\"x\",\"a\":1}")).as("the failed calls left the step as it was")
			.hasToString("[{kind=x, b=1}]");
	}

	@Test
	void anotherTypePropertyIsTheOneAKindRenameReplaces() {
		JacksonEventSerializer serializer = new JacksonEventSerializer(Upcasters.builder()
			.typeProperty("type")
			.add(EventUpcaster.renamingKind("old", 1, "new"))
			.add(EventUpcaster.adding("new", 2, "kind", "kept"))
			.build());
		assertThat(read(serializer, "{\"type\":\"old\",\"kind\":\"old\"}")).hasToString("[{type=new, kind=kept}]");
	}

}
