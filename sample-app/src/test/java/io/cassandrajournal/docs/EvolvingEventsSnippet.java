// The README's "Evolving events" snippets, between the tags (ReadmeSnippetsTest keeps the README equal to them;
// EvolvingEventsSnippetTest runs them). Not a @Configuration here, so that the quick-start tests' contexts do not
// pick the upcasters up (the sample's own events use the kind "deposited").
package io.cassandrajournal.docs;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import org.springframework.context.annotation.Bean;

import io.cassandrajournal.serialization.EventUpcaster;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.serialization.PayloadVersion;
import io.cassandrajournal.serialization.Upcasters;

final class EvolvingEventsSnippet {

	private EvolvingEventsSnippet() {
	}

	// tag::evolving-events-types[]
	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
	@JsonSubTypes({ @JsonSubTypes.Type(value = FundsAdded.class, name = "funds-added"),
	                @JsonSubTypes.Type(value = FundsRemoved.class, name = "funds-removed"),
	                @JsonSubTypes.Type(value = TransferNoted.class, name = "transfer-noted") })
	sealed interface LedgerEvent permits FundsAdded, FundsRemoved, TransferNoted { }

	@PayloadVersion(3)   // written as {"kind":"funds-added","amountCents":500,"currency":"EUR","_version":3}
	record FundsAdded(long amountCents, String currency) implements LedgerEvent { }

	@PayloadVersion(2)
	record FundsRemoved(long amountCents) implements LedgerEvent { }

	@PayloadVersion(2)
	record TransferNoted(String to) implements LedgerEvent { }
	// end::evolving-events-types[]

	static class LedgerUpcasters {

		// tag::evolving-events-upcasters[]
		// v1 {"kind":"deposited","amount":5} (whole euros) becomes funds-added v2 (cents): a rename
		@Bean
		EventUpcaster depositedV1() {
		    return EventUpcaster.of("deposited", 1, (event) -> {
		        long euros = event.remove("amount").asLong();
		        return event.put("kind", "funds-added").put("amountCents", euros * 100);
		    });
		}

		// funds-added v2 gains a currency at v3: a declared step, read without a JSON tree
		@Bean
		EventUpcaster fundsAddedV2() {
		    return EventUpcaster.adding("funds-added", 2, "currency", "EUR");
		}

		// v1 {"kind":"credited","cents":250,"legacyId":7} becomes funds-added v2: declared renames and a removal
		@Bean
		EventUpcaster creditedV1() {
		    return EventUpcaster.renamingKind("credited", 1, "funds-added")
		            .renaming("cents", "amountCents")
		            .removing("legacyId");
		}

		// v1 {"kind":"transferred","amount":2,"to":"bob"} splits into two events at v2
		@Bean
		EventUpcaster transferredV1() {
		    return EventUpcaster.splitting("transferred", 1, (event) -> List.of(
		            event.objectNode().put("kind", "funds-removed").put("amountCents", event.get("amount").asLong() * 100),
		            event.objectNode().put("kind", "transfer-noted").put("to", event.get("to").asString())));
		}
		// end::evolving-events-upcasters[]

	}

	@PayloadVersion(2)
	record Balance(long cents) {
	}

	static JacksonEventSerializer plainJava() {
		LedgerUpcasters beans = new LedgerUpcasters();
		EventUpcaster depositedV1 = beans.depositedV1();
		EventUpcaster fundsAddedV2 = beans.fundsAddedV2();
		EventUpcaster transferredV1 = beans.transferredV1();
		EventUpcaster creditedV1 = beans.creditedV1();
		// tag::evolving-events-plain-java[]
		Upcasters upcasters = Upcasters.builder()
		    .add(depositedV1).add(fundsAddedV2).add(transferredV1).add(creditedV1)   // a gap in a chain fails here
		    .snapshot(Balance.class, 1, (state) -> state.put("cents", state.remove("euros").asLong() * 100))
		    .build();
		JacksonEventSerializer serializer = new JacksonEventSerializer(upcasters);
		// then CassandraJournal.create(session, options, serializer), and the same serializer for the read
		// journal, the snapshot store and the durable state store
		// end::evolving-events-plain-java[]
		return serializer;
	}

}
