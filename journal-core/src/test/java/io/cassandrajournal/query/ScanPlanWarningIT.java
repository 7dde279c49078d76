package io.cassandrajournal.query;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A live tag feed that has to scan the journal says which property turns the tag index on.
 */
@CassandraTest
class ScanPlanWarningIT {

	@Test
	void theScanWarningNamesTheProperty(TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name());
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), options,
				new JacksonEventSerializer());
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(CassandraReadJournal.class);
		logger.addAppender(logs);
		try {
			query.liveEventsByTag(TagFilter.tag("orders"), TagOffset.START, FeedSettings.DEFAULTS);
		}
		finally {
			logger.detachAppender(logs);
		}
		assertThat(logs.list).filteredOn((e) -> e.getLevel() == Level.WARN)
			.singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("scans the whole events table")
				.contains("journal.cassandra.use-tag-index=false"));
	}

}
