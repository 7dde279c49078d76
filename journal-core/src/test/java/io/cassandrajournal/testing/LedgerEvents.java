package io.cassandrajournal.testing;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import tools.jackson.databind.node.ObjectNode;

import io.cassandrajournal.serialization.EventUpcaster;
import io.cassandrajournal.serialization.PayloadVersion;
import io.cassandrajournal.serialization.Upcasters;

/**
 * A ledger's events in two generations, for the upcasting tests. Version 1 (as an old release wrote them):
 * {@code deposited {amount}} and {@code transferred {amount, to}}, amounts in whole euros. Current version:
 * {@code funds-added} and {@code funds-removed} at version 3 ({@code amountCents}, {@code currency}) and
 * {@code transfer-noted} at version 2. The chains: {@code deposited} v1 is renamed to {@code funds-added}
 * v2 (euros to cents), which gains a currency at v3; {@code transferred} v1 splits into {@code funds-removed}
 * v2 (which gains a currency at v3) and {@code transfer-noted} v2.
 */
public final class LedgerEvents {

	private LedgerEvents() {
	}

	/** The events as version 1 wrote them. */
	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
	@JsonSubTypes({ @JsonSubTypes.Type(value = V1.Deposited.class, name = "deposited"),
			@JsonSubTypes.Type(value = V1.Transferred.class, name = "transferred") })
	public sealed interface V1 {

		record Deposited(long amount) implements V1 {
		}

		record Transferred(long amount, String to) implements V1 {
		}

	}

	/** The events as the current version reads and writes them. */
	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
	@JsonSubTypes({ @JsonSubTypes.Type(value = Ledger.FundsAdded.class, name = "funds-added"),
			@JsonSubTypes.Type(value = Ledger.FundsRemoved.class, name = "funds-removed"),
			@JsonSubTypes.Type(value = Ledger.TransferNoted.class, name = "transfer-noted") })
	public sealed interface Ledger {

		@PayloadVersion(3)
		record FundsAdded(long amountCents, String currency) implements Ledger {
		}

		@PayloadVersion(3)
		record FundsRemoved(long amountCents, String currency) implements Ledger {
		}

		@PayloadVersion(2)
		record TransferNoted(String to) implements Ledger {
		}

	}

	/** deposited v1 to funds-added v2: a rename, euros to cents. */
	public static final EventUpcaster DEPOSITED_V1 = EventUpcaster.of("deposited", 1, (event) -> {
		long amount = event.get("amount").asLong();
		event.remove("amount");
		event.put("kind", "funds-added");
		event.put("amountCents", amount * 100);
		return event;
	});

	/**
	 * funds-added v2 to v3: the currency, euros before version 3. A declared step: a payload stored at version 2 is
	 * upcast on its token stream; one from version 1 goes through the function step above, then this one on the tree.
	 */
	public static final EventUpcaster FUNDS_ADDED_V2 = EventUpcaster.adding("funds-added", 2, "currency", "EUR");

	/** transferred v1 to funds-removed v2 and transfer-noted v2: a split. */
	public static final EventUpcaster TRANSFERRED_V1 = EventUpcaster.splitting("transferred", 1, (event) -> {
		ObjectNode removed = event.objectNode();
		removed.put("kind", "funds-removed");
		removed.put("amountCents", event.get("amount").asLong() * 100);
		ObjectNode noted = event.objectNode();
		noted.put("kind", "transfer-noted");
		noted.put("to", event.get("to").asString());
		return List.of(removed, noted);
	});

	/** funds-removed v2 to v3: the currency (declared, like {@link #FUNDS_ADDED_V2}). */
	public static final EventUpcaster FUNDS_REMOVED_V2 = EventUpcaster.adding("funds-removed", 2, "currency", "EUR");

	/** @return every chain from version 1 to the current version */
	public static Upcasters upcasters() {
		return Upcasters.builder().add(DEPOSITED_V1).add(FUNDS_ADDED_V2).add(TRANSFERRED_V1).add(FUNDS_REMOVED_V2)
			.build();
	}

	/** @return the balance in cents after an event */
	public static long apply(long balance, Ledger event) {
		if (event instanceof Ledger.FundsAdded added) {
			return balance + added.amountCents();
		}
		if (event instanceof Ledger.FundsRemoved removed) {
			return balance - removed.amountCents();
		}
		return balance;
	}

}
