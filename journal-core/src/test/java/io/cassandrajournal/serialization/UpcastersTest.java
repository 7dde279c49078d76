package io.cassandrajournal.serialization;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.testing.LedgerEvents;
import io.cassandrajournal.testing.LedgerEvents.Ledger;
import io.cassandrajournal.testing.LedgerEvents.Ledger.FundsAdded;
import io.cassandrajournal.testing.LedgerEvents.Ledger.FundsRemoved;
import io.cassandrajournal.testing.LedgerEvents.Ledger.TransferNoted;
import io.cassandrajournal.testing.LedgerEvents.V1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The upcaster chain on its own: versions stamped on write, chains run step by step on read (with a rename
 * and a split), and the errors a broken or incomplete chain gives.
 */
class UpcastersTest {

	private final JacksonEventSerializer v1 = new JacksonEventSerializer();

	private final JacksonEventSerializer current = new JacksonEventSerializer(LedgerEvents.upcasters());

	@Test
	void aVersionOnePayloadIsReadAsTheCurrentTypeThroughARenameAndASecondStep() {
		String stored = this.v1.serialize(new V1.Deposited(5));
		assertThat(stored).isEqualTo("{\"kind\":\"deposited\",\"amount\":5}");
		assertThat(this.current.deserializeEvent(stored, Ledger.class)).containsExactly(new FundsAdded(500, "EUR"));
	}

	@Test
	void aSplitGivesItsPartsInOrderEachContinuingItsOwnChain() {
		String stored = this.v1.serialize(new V1.Transferred(7, "bob"));
		assertThat(this.current.deserializeEvent(stored, Ledger.class))
			.containsExactly(new FundsRemoved(700, "EUR"), new TransferNoted("bob"));
	}

	@Test
	void stepsRunInVersionOrderWhateverTheOrderOfRegistration() {
		List<String> ran = new CopyOnWriteArrayList<>();
		Upcasters upcasters = Upcasters.builder()
			.add(EventUpcaster.of("x", 3, (event) -> record(ran, "3", event)))
			.add(EventUpcaster.of("x", 1, (event) -> record(ran, "1", event)))
			.add(EventUpcaster.of("x", 2, (event) -> record(ran, "2", event)))
			.build();
		Object read = new JacksonEventSerializer(upcasters).deserializeEvent("{\"kind\":\"x\"}", Object.class).get(0);
		assertThat(ran).containsExactly("1", "2", "3");
		assertThat(read).hasToString("{kind=x, steps=123}");
		ran.clear();
		new JacksonEventSerializer(upcasters).deserializeEvent("{\"kind\":\"x\",\"_version\":2}", Object.class);
		assertThat(ran).as("a payload stamped at version 2 starts there").containsExactly("2", "3");
	}

	private static ObjectNode record(List<String> ran, String step, ObjectNode event) {
		ran.add(step);
		return event.put("steps", (event.has("steps") ? event.get("steps").asString() : "") + step);
	}

	@Test
	void writesStampTheCurrentVersionOnlyAboveOne() {
		assertThat(this.current.serialize(new FundsAdded(250, "CHF")))
			.isEqualTo("{\"kind\":\"funds-added\",\"amountCents\":250,\"currency\":\"CHF\",\"_version\":3}");
		assertThat(this.current.serialize(new V1.Deposited(5))).as("an unversioned class, byte for byte as before")
			.isEqualTo("{\"kind\":\"deposited\",\"amount\":5}");
		assertThat(this.current.deserializeEvent(this.current.serialize(new FundsAdded(250, "CHF")), Ledger.class))
			.as("a current payload passes through untouched").containsExactly(new FundsAdded(250, "CHF"));
		assertThat(this.v1.deserialize(this.current.serialize(new TransferNoted("ann")), Object.class))
			.as("a generic reader does not see the version property").hasToString("{kind=transfer-noted, to=ann}");
	}

	@Test
	void aGapInAChainIsAnErrorWhenBuiltNamingTheKindAndTheMissingVersion() {
		Upcasters.Builder builder = Upcasters.builder()
			.add(EventUpcaster.of("deposited", 1, (event) -> event))
			.add(EventUpcaster.of("deposited", 3, (event) -> event));
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(builder::build)
			.withMessageContaining("kind 'deposited'")
			.withMessageContaining("none reads version 2");
	}

	@Test
	void twoStepsFromOneVersionOfAKindAreRefused() {
		Upcasters.Builder builder = Upcasters.builder().add(EventUpcaster.of("deposited", 1, (event) -> event));
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> builder.add(EventUpcaster.of("deposited", 1, (event) -> event)))
			.withMessageContaining("Two upcasters read kind 'deposited' at version 1");
	}

	@Test
	void aPayloadOlderThanItsClassWithoutAnUpcasterIsAClearError() {
		JacksonEventSerializer incomplete = new JacksonEventSerializer(
				Upcasters.builder().add(LedgerEvents.DEPOSITED_V1).build());
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> incomplete.deserializeEvent("{\"kind\":\"deposited\",\"amount\":5}", Ledger.class))
			.withMessageContaining("kind 'funds-added' is at version 2")
			.withMessageContaining(FundsAdded.class.getName() + " is at version 3")
			.withMessageContaining("no upcaster reads kind 'funds-added' at version 2");
		assertThatExceptionOfType(JournalSerializationException.class)
			.as("without any upcaster")
			.isThrownBy(() -> this.v1.deserializeEvent("{\"kind\":\"funds-added\",\"amountCents\":5}", Ledger.class))
			.withMessageContaining("is at version 1 but " + FundsAdded.class.getName() + " is at version 3");
	}

	@Test
	void aFailingStepIsNamedInTheError() {
		JacksonEventSerializer broken = new JacksonEventSerializer(Upcasters.builder()
			.add(EventUpcaster.of("deposited", 1, (event) -> {
				throw new IllegalArgumentException("no amount");
			}))
			.build());
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> broken.deserializeEvent("{\"kind\":\"deposited\"}", Ledger.class))
			.withMessageContaining("Upcaster 'deposited v1->v2' (kind 'deposited', version 1) failed")
			.withMessageContaining("no amount");
	}

	@PayloadVersion(2)
	record Balance(long cents) {
	}

	@Test
	void snapshotsHaveAVersionAndAChainOfTheirOwn() {
		JacksonEventSerializer serializer = new JacksonEventSerializer(Upcasters.builder()
			.snapshot(Balance.class, 1, (state) -> state.put("cents", state.remove("euros").asLong() * 100))
			.build());
		assertThat(serializer.deserialize("{\"euros\":4}", Balance.class)).isEqualTo(new Balance(400));
		String written = serializer.serialize(new Balance(7));
		assertThat(written).isEqualTo("{\"cents\":7,\"_version\":2}");
		assertThat(serializer.deserialize(written, Balance.class)).isEqualTo(new Balance(7));
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> this.v1.deserialize("{\"cents\":4}", Balance.class))
			.withMessageContaining("is at version 1 but " + Balance.class.getName() + " is at version 2");
	}

	@Test
	void onlyTheTopLevelKindChoosesTheChainWhereverItStands() {
		JacksonEventSerializer serializer = new JacksonEventSerializer(
				Upcasters.builder().add(EventUpcaster.of("x", 1, (event) -> event.put("upcast", true))).build());
		assertThat(serializer.deserializeEvent("{\"inner\":{\"kind\":\"x\"},\"kind\":\"y\"}", Object.class))
			.as("a kind without a chain, after a nested object naming one").hasToString("[{inner={kind=x}, kind=y}]");
		assertThat(serializer.deserializeEvent("{\"inner\":{\"kind\":\"y\"},\"list\":[1,{\"kind\":\"y\"}],\"kind\":\"x\"}",
				Object.class))
			.as("the kind of a chain, last").hasToString("[{inner={kind=y}, list=[1, {kind=y}], kind=x, upcast=true}]");
		assertThat(serializer.deserializeEvent("[1,2]", Object.class)).as("not an object").hasToString("[[1, 2]]");
	}

}
