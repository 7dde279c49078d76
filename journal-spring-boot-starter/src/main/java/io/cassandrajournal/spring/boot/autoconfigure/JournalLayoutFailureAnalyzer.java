package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.stream.Collectors;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.cassandrajournal.JournalLayoutMismatchException;

/**
 * Turns layout settings that differ from the keyspace's recorded ones into a failure report naming each property
 * with both values.
 */
final class JournalLayoutFailureAnalyzer extends AbstractFailureAnalyzer<JournalLayoutMismatchException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, JournalLayoutMismatchException cause) {
		String differences = cause.mismatches()
			.stream()
			.map((m) -> "journal.cassandra." + m.setting() + " is " + m.configured() + " here but the journal was "
					+ "first started with " + m.recorded())
			.collect(Collectors.joining("\n    ", "\n    ", ""));
		String first = cause.mismatches().get(0).setting();
		return new FailureAnalysis("The journal's layout settings differ from the ones recorded for this keyspace in "
				+ cause.table() + ":" + differences
				+ "\nInstances with different layouts miss or misread each other's events.",
				"Set the properties above to the recorded values (every instance sharing the keyspace must agree). To "
						+ "change the layout deliberately (turning the tag index on before a backfill, more persistenceId "
						+ "buckets), stop every instance, then update the record, e.g. UPDATE " + cause.table()
						+ " SET settings['" + first + "'] = '<new value>' WHERE id = 'layout', and start them with the "
						+ "new value.",
				cause);
	}

}
