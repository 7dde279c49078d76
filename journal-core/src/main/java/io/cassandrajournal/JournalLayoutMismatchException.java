package io.cassandrajournal;

import java.util.List;
import java.util.stream.Collectors;

/**
 * This instance's layout settings (how rows are laid out: the tag index, its bucketing, the partition size,
 * the persistenceId buckets) differ from the ones recorded for the keyspace's journal on its first start.
 * Instances with different layouts silently miss or misread each other's events, so start-up is refused.
 */
public class JournalLayoutMismatchException extends JournalException {

	private static final long serialVersionUID = 1L;

	private final String table;

	private final List<Mismatch> mismatches;

	/**
	 * @param table the table holding the record ({@code keyspace.table})
	 * @param mismatches every setting that differs
	 */
	public JournalLayoutMismatchException(String table, List<Mismatch> mismatches) {
		super("The journal's layout recorded in " + table + " differs from this instance's: "
				+ mismatches.stream().map(Mismatch::toString).collect(Collectors.joining("; ")));
		this.table = table;
		this.mismatches = List.copyOf(mismatches);
	}

	/** @return the table holding the record ({@code keyspace.table}) */
	public String table() {
		return this.table;
	}

	/** @return every setting that differs, in a fixed order */
	public List<Mismatch> mismatches() {
		return this.mismatches;
	}

	/**
	 * One setting that differs.
	 *
	 * @param setting the setting in property form ({@code partition-size}; the Spring Boot property is
	 * {@code journal.cassandra.<setting>})
	 * @param recorded the value recorded on the first start
	 * @param configured this instance's value
	 */
	public record Mismatch(String setting, String recorded, String configured) {

		@Override
		public String toString() {
			return this.setting + " was recorded as " + this.recorded + ", this instance has " + this.configured;
		}

	}

}
