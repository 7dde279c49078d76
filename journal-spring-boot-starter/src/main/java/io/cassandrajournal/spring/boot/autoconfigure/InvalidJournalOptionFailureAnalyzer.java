package io.cassandrajournal.spring.boot.autoconfigure;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns an invalid journal option (a table name that is not a plain CQL identifier, a non-positive size)
 * into a failure report: the options' own message names the option and the rule.
 */
final class InvalidJournalOptionFailureAnalyzer extends AbstractFailureAnalyzer<BeanCreationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, BeanCreationException cause) {
		// The options bean usually fails while another bean (the journal, a store) is being created: the outermost
		// BeanCreationException names that one, so look for the options' own failure down the chain.
		BeanCreationException options = null;
		for (Throwable t = cause; t != null; t = t.getCause()) {
			if (t instanceof BeanCreationException creation && "cassandraJournalOptions".equals(creation.getBeanName())) {
				options = creation;
				break;
			}
		}
		if (options == null) {
			return null;
		}
		Throwable root = options.getMostSpecificCause();
		if (!(root instanceof IllegalArgumentException) && !(root instanceof IllegalStateException)) {
			return null;
		}
		return new FailureAnalysis("Invalid journal configuration: " + root.getMessage(),
				"Change the journal.cassandra.* property named in the description (option names map to properties: "
						+ "eventsTable is journal.cassandra.events-table).",
				cause);
	}

}
