package io.cassandrajournal.docs;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.docs.EvolvingEventsSnippet.Balance;
import io.cassandrajournal.docs.EvolvingEventsSnippet.FundsAdded;
import io.cassandrajournal.docs.EvolvingEventsSnippet.FundsRemoved;
import io.cassandrajournal.docs.EvolvingEventsSnippet.LedgerEvent;
import io.cassandrajournal.docs.EvolvingEventsSnippet.TransferNoted;
import io.cassandrajournal.serialization.JacksonEventSerializer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the README's "Evolving events" snippets: version 1 payloads read as the current types.
 */
class EvolvingEventsSnippetTest {

	private final JacksonEventSerializer serializer = EvolvingEventsSnippet.plainJava();

	@Test
	void versionOneEventsReadAsCurrentTypes() {
		assertThat(this.serializer.deserializeEvent("{\"kind\":\"deposited\",\"amount\":5}", LedgerEvent.class))
			.containsExactly(new FundsAdded(500, "EUR"));
		assertThat(this.serializer.deserializeEvent("{\"kind\":\"transferred\",\"amount\":2,\"to\":\"bob\"}",
				LedgerEvent.class))
			.containsExactly(new FundsRemoved(200), new TransferNoted("bob"));
		assertThat(this.serializer.deserializeEvent("{\"kind\":\"credited\",\"cents\":250,\"legacyId\":7}",
				LedgerEvent.class))
			.as("through the two declared steps").containsExactly(new FundsAdded(250, "EUR"));
	}

	@Test
	void writesStampTheVersionAsTheCommentSays() {
		assertThat(this.serializer.serialize(new FundsAdded(500, "EUR")))
			.isEqualTo("{\"kind\":\"funds-added\",\"amountCents\":500,\"currency\":\"EUR\",\"_version\":3}");
		assertThat(this.serializer.deserialize("{\"euros\":3}", Balance.class)).isEqualTo(new Balance(300));
	}

}
