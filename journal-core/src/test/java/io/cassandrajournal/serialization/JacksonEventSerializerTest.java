package io.cassandrajournal.serialization;

import java.io.Serializable;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.annotation.JsonValue;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.UnknownPayloadTypeException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the default serializer tells readers about stored types: the type to read a payload as for a wanted
 * type, and a typed exception for a type id it does not know.
 */
class JacksonEventSerializerTest {

	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
	@JsonSubTypes({ @JsonSubTypes.Type(value = Deposited.class, name = "deposited") })
	sealed interface Event permits Deposited {
	}

	record Deposited(long amount) implements Event, Serializable {
	}

	record State(long amount) {
	}

	private final JacksonEventSerializer serializer = new JacksonEventSerializer();

	@Test
	void aSubtypeIsReadAsItsTypeInfoRoot() {
		assertThat(this.serializer.readTypeFor(Deposited.class)).contains(Event.class);
		assertThat(this.serializer.readTypeFor(Event.class)).contains(Event.class);
	}

	@Test
	void storedTextAndGenericTreesTakeEveryPayload() {
		assertThat(this.serializer.readTypeFor(String.class)).contains(String.class);
		assertThat(this.serializer.readTypeFor(Object.class)).contains(Object.class);
		assertThat(this.serializer.deserialize("{\"kind\":\"deposited\",\"amount\":5}", Object.class))
			.isEqualTo(Map.of("kind", "deposited", "amount", 5));
	}

	@Test
	void noStoredTypeResolvesToATypeWithoutTypeInfo() {
		assertThat(this.serializer.readTypeFor(State.class)).isEmpty();
	}

	@Test
	void anUnknownTypeIdIsATypedException() {
		assertThatThrownBy(() -> this.serializer.deserialize("{\"kind\":\"closed\"}", Event.class))
			.isInstanceOf(UnknownPayloadTypeException.class);
		assertThatThrownBy(() -> this.serializer.deserialize("{\"kind\":", Event.class))
			.isInstanceOf(JournalSerializationException.class)
			.isNotInstanceOf(UnknownPayloadTypeException.class);
	}

	@PayloadVersion(2)
	record Versioned(long amount) {
	}

	@PayloadVersion(2)
	record Empty() {
	}

	@PayloadVersion(2)
	record Scalar(@JsonValue long amount) {
	}

	@Test
	void theVersionIsAppendedAsTheLastPropertyOfOneWrite() {
		assertThat(this.serializer.serialize(new Versioned(5))).isEqualTo("{\"amount\":5,\"_version\":2}");
		assertThat(this.serializer.serialize(new Empty())).isEqualTo("{\"_version\":2}");
		assertThat(this.serializer.deserialize(this.serializer.serialize(new Empty()), Empty.class)).isEqualTo(new Empty());
		assertThatThrownBy(() -> this.serializer.serialize(new Scalar(3)))
			.isInstanceOf(JournalSerializationException.class)
			.hasMessageContaining("not written as a JSON object");
	}

	@Test
	void onlyTheEndOfThePayloadIsLookedAtForTheVersion() {
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("{\"amount\":5,\"_version\":2}")).isTrue();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("{ \"amount\" : 5 , \"_version\" : 12 }\n")).isTrue();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("{\"amount\":5}")).isFalse();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("{\"x_version\":2}")).isFalse();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("{\"a\":\"_version\"}")).isFalse();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("{\"_version\":\"2\"}")).isFalse();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("[2]")).isFalse();
		assertThat(JacksonEventSerializer.stampedVersionAtEnd("")).isFalse();
	}

	@Test
	void aVersionStampedElsewhereThanAtTheEndStillCounts() {
		assertThat(this.serializer.deserializeEvent("{\"_version\":2,\"amount\":5}", Versioned.class))
			.containsExactly(new Versioned(5));
		assertThatThrownBy(() -> this.serializer.deserializeEvent("{\"amount\":5}", Versioned.class))
			.isInstanceOf(JournalSerializationException.class)
			.hasMessageContaining("is at version 1 but");
	}

	/** Review R2, item 2: the filter that drops the version used to drop the root object it was the only property of. */
	@Test
	void aStampedPayloadWithNoOtherPropertyIsReadAsAnEvent() {
		assertThat(this.serializer.deserializeEvent("{\"_version\":2}", Empty.class)).containsExactly(new Empty());
		assertThat(this.serializer.deserializeEvent(this.serializer.serialize(new Empty()), Empty.class))
			.containsExactly(new Empty());
		JacksonEventSerializer withChains = new JacksonEventSerializer(
				Upcasters.builder().add(EventUpcaster.of("deposited", 1, (event) -> event)).build());
		assertThat(withChains.deserializeEvent("{\"_version\":2}", Empty.class)).as("a kind-less payload, chains elsewhere")
			.containsExactly(new Empty());
	}

	/** @return a serializer whose one chain, of kind {@code funds-added}, starts at version 2 and marks what it read */
	private static JacksonEventSerializer chainFromVersionTwo() {
		return new JacksonEventSerializer(Upcasters.builder()
			.add(EventUpcaster.of("funds-added", 2, (event) -> event.put("upcast", true)))
			.build());
	}

	/**
	 * Review R2, item 3 (README "Evolving events"): a payload stamped elsewhere than at the end of its text, of a kind
	 * whose chain starts above version 1, is read at its stamped version (the chain runs), not bound as version 1.
	 */
	@Test
	void aVersionStampedElsewhereIsFoundWhenTheKindsChainStartsAboveVersionOne() {
		JacksonEventSerializer serializer = chainFromVersionTwo();
		assertThat(serializer.deserializeEvent("{\"kind\":\"funds-added\",\"_version\":2,\"amountCents\":500}",
				Object.class))
			.as("stamped before another property").hasToString("[{kind=funds-added, amountCents=500, upcast=true}]");
		assertThat(serializer.deserializeEvent("{\"kind\":\"funds-added\",\"amountCents\":500}", Object.class))
			.as("version 1: no step reads it").hasToString("[{kind=funds-added, amountCents=500}]");
	}

	/**
	 * A version property whose name is written with JSON escapes (backslash-u005f for its underscore, say: it is
	 * {@code _version} to every JSON reader) is the version: the text's quick looks for {@code "_version"} used to
	 * miss it, so such a payload was read as version 1 (docs/reliability.md, finding 31). An escape elsewhere changes
	 * nothing.
	 */
	@Test
	void aVersionPropertyWhoseNameIsWrittenWithEscapesIsTheVersion() {
		String escaped = "{\"amount\":5,\"\\u005fversion\":2}";
		assertThat(this.serializer.deserializeEvent(escaped, Versioned.class)).as("an event")
			.containsExactly(new Versioned(5));
		assertThat(this.serializer.deserialize(escaped, Versioned.class)).as("a snapshot").isEqualTo(new Versioned(5));
		JacksonEventSerializer serializer = chainFromVersionTwo();
		assertThat(serializer.deserializeEvent("{\"kind\":\"funds-added\",\"amountCents\":500,\"_\\u0076ersion\":2}",
				Object.class))
			.as("a chain from version 2").hasToString("[{kind=funds-added, amountCents=500, upcast=true}]");
		assertThat(serializer.deserializeEvent("{\"kind\":\"funds-added\",\"note\":\"\\u005fversion \\u00e9\"}",
				Object.class))
			.as("escapes in a value: version 1").hasToString("[{kind=funds-added, note=_version \u00e9}]");
		assertThat(serializer.deserializeEvent("{\"\\u006bind\":\"funds-added\",\"_version\":2}", Object.class))
			.as("an escaped type property").hasToString("[{kind=funds-added, upcast=true}]");
	}

	/**
	 * A payload at version 1 for a class at version 2 is refused with the message that says which upcaster is
	 * missing, also when its text merely looks as if it might hold a stamp elsewhere: a nested {@code _version}, or
	 * an escaped backslash before a {@code u} in a value. Until 2026-12-04 the check looked again at every pass and
	 * ended in a StackOverflowError (found by a review of finding 31's item 3).
	 */
	@Test
	void aPayloadThatOnlyLooksStampedElsewhereIsRefusedAsVersionOne() {
		for (String json : List.of("{\"amount\":5,\"meta\":{\"_version\":1}}", "{\"amount\":5,\"re\":\"\\\\u0065\"}")) {
			assertThatThrownBy(() -> this.serializer.deserializeEvent(json, Versioned.class)).as(json)
				.isInstanceOf(JournalSerializationException.class)
				.hasMessageContaining("is at version 1 but");
		}
	}

	/**
	 * What sends a payload without a stamp at its end to the tree: {@code "_version"} in its text, or an escape of one
	 * of that name's characters; other escapes (non-ASCII, control characters) leave it on the text's fast path.
	 */
	@Test
	void onlyAnEscapeOfACharacterOfTheVersionNameCounts() {
		assertThat(JacksonEventSerializer.mayHoldVersionElsewhere("{\"amount\":5}")).isFalse();
		assertThat(JacksonEventSerializer.mayHoldVersionElsewhere("{\"a\":\"caf\\u00e9 \\u0001 \\u4e2d \\u00E9\"}"))
			.as("other escapes").isFalse();
		assertThat(JacksonEventSerializer.mayHoldVersionElsewhere("{\"a\":\"\\u00\"}")).as("a cut escape").isFalse();
		assertThat(JacksonEventSerializer.mayHoldVersionElsewhere("{\"a\":1,\"_version\":2}")).as("plain").isTrue();
		assertThat(JacksonEventSerializer.mayHoldVersionElsewhere("{\"\\u005fversion\":2}")).isTrue();
		assertThat(JacksonEventSerializer.mayHoldVersionElsewhere("{\"_versio\\u006E\":2}")).isTrue();
	}

	@Test
	void aStrictMapperReadsAStampedPayload() {
		JacksonEventSerializer strict = new JacksonEventSerializer(
				JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build());
		assertThat(strict.deserializeEvent(strict.serialize(new Versioned(7)), Versioned.class))
			.containsExactly(new Versioned(7));
		assertThat(strict.deserialize(strict.serialize(new Versioned(7)), Versioned.class)).isEqualTo(new Versioned(7));
	}

	@Test
	void theVersionAtTheEndIsReadOffTheText() {
		assertThat(JacksonEventSerializer.versionAtEnd("{\"amount\":5,\"_version\":12}")).isEqualTo(12);
		assertThat(JacksonEventSerializer.versionAtEnd("{ \"_version\" : 3 }\n")).isEqualTo(3);
		assertThat(JacksonEventSerializer.versionAtEnd("{\"amount\":5}")).isEqualTo(JacksonEventSerializer.NOT_STAMPED);
		assertThat(JacksonEventSerializer.versionAtEnd("{\"_version\":0}")).as("no valid version").isZero();
		assertThat(JacksonEventSerializer.versionAtEnd("{\"_version\":12345678901}")).as("too long").isZero();
	}

	/**
	 * A payload at the version its kind's chain ends with is bound from its text (no tree): the result must be what
	 * the tree gave, the top-level version property taken out (a strict mapper does not see it), a nested property of
	 * the same name kept, no step run; an invalid version still fails as on the tree.
	 */
	@Test
	void aPayloadAtTheVersionItsChainEndsWithIsReadAsOnTheTreeWithoutItsVersion() {
		Upcasters upcasters = Upcasters.builder()
			.add(EventUpcaster.of("deposited", 1, (event) -> event.put("amount", event.get("amount").asLong() * 10)))
			.build();
		JacksonEventSerializer strict = new JacksonEventSerializer(
				JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build(), upcasters);
		assertThat(strict.deserializeEvent("{\"kind\":\"deposited\",\"amount\":5,\"_version\":2}", Event.class))
			.as("at the chain's end: no step").containsExactly(new Deposited(5));
		assertThat(strict.deserializeEvent("{\"kind\":\"deposited\",\"amount\":5}", Event.class))
			.as("version 1: upcast").containsExactly(new Deposited(50));
		JacksonEventSerializer lenient = new JacksonEventSerializer(upcasters);
		assertThat(lenient.deserializeEvent("{\"kind\":\"other\",\"inner\":{\"_version\":1},\"_version\":3}",
				Object.class))
			.as("the top-level version out, the nested one kept").hasToString("[{kind=other, inner={_version=1}}]");
		assertThatThrownBy(() -> lenient.deserializeEvent("{\"kind\":\"deposited\",\"_version\":0}", Event.class))
			.isInstanceOf(JournalSerializationException.class)
			.hasMessageContaining("_version");
	}

	@Test
	void theKindIsFoundWhateverTheWayItIsWritten() {
		JacksonEventSerializer serializer = new JacksonEventSerializer(Upcasters.builder()
			.add(EventUpcaster.of("a\"b", 1, (event) -> event.put("upcast", true)))
			.add(EventUpcaster.of("plain", 1, (event) -> event.put("upcast", true)))
			.build());
		assertThat(serializer.deserializeEvent("{\"kind\":\"a\\\"b\",\"n\":1}", Object.class))
			.as("an escaped kind").hasToString("[{kind=a\"b, n=1, upcast=true}]");
		assertThat(serializer.deserializeEvent("{\"kind\":\"plain\",\"n\":1}", Object.class)).as("as Jackson writes it")
			.hasToString("[{kind=plain, n=1, upcast=true}]");
		assertThat(serializer.deserializeEvent("{ \"kind\" : \"plain\" }", Object.class)).as("with spaces")
			.hasToString("[{kind=plain, upcast=true}]");
		assertThat(serializer.deserializeEvent("{\"kind\":\"plainer\",\"n\":\"x\\\"\"}", Object.class))
			.as("another kind, an escape further on").hasToString("[{kind=plainer, n=x\"}]");
	}


	/** Numbers of all kinds, at version 2 so that a version-1 payload goes through its kind's general step. */
	@PayloadVersion(2)
	record Priced(BigDecimal amount, BigDecimal big, Object raw, double plain, JsonNode node) {
	}

	/**
	 * A general upcaster step works on a tree; that tree used to hold doubles, so a BigDecimal field bound after it got
	 * 12.5 for a stored 12.50 and lost the digits a double cannot hold. Bound after a general step, every field gets
	 * what it gets from the text without one (docs/reliability.md, finding 31).
	 */
	@Test
	void aGeneralStepLeavesNumbersAsTheTextGivesThem() {
		JacksonEventSerializer serializer = new JacksonEventSerializer(
				Upcasters.builder().add(EventUpcaster.of("priced", 1, (event) -> event)).build());
		String stored = "{\"kind\":\"priced\",\"amount\":12.50,\"big\":1234567890123.4567891,\"raw\":12.50,"
				+ "\"plain\":0.1,\"node\":{\"x\":12.50}";
		Priced upcast = serializer.deserializeEvent(stored + "}", Priced.class).get(0);
		Priced plain = serializer.deserializeEvent(stored + ",\"_version\":2}", Priced.class).get(0);

		assertThat(upcast.amount()).as("the scale kept").isEqualTo(new BigDecimal("12.50"));
		assertThat(upcast.big()).as("every digit kept").isEqualTo(new BigDecimal("1234567890123.4567891"));
		assertThat(upcast.raw()).as("an untyped float is a double, as from the text").isEqualTo(12.5);
		assertThat(upcast).isEqualTo(plain);
	}

}
