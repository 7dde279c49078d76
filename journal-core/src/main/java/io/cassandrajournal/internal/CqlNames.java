package io.cassandrajournal.internal;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks keyspace and table names from configuration before they reach CQL text. Only unquoted CQL
 * identifiers pass: a letter, then letters, digits and underscores, at most 48 characters, and not a
 * reserved word. Everything else (quotes, spaces, semicolons) is rejected, so configuration can never
 * inject CQL.
 */
public final class CqlNames {

	private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z][A-Za-z0-9_]{0,47}");

	private static final Set<String> RESERVED = Set.of("add", "allow", "alter", "and", "apply", "asc", "authorize",
			"batch", "begin", "by", "columnfamily", "create", "delete", "desc", "describe", "drop", "entries",
			"execute", "from", "full", "grant", "if", "in", "index", "infinity", "insert", "into", "is", "keyspace",
			"limit", "materialized", "mbean", "mbeans", "modify", "nan", "norecursive", "not", "null", "of", "on",
			"or", "order", "primary", "rename", "replace", "revoke", "schema", "select", "set", "table", "to",
			"token", "truncate", "unlogged", "unset", "update", "use", "using", "view", "where", "with");

	private CqlNames() {
	}

	/**
	 * @param option the option's name, for the message
	 * @param value the configured name
	 * @return the name in lower case (how Cassandra stores an unquoted identifier)
	 * @throws IllegalArgumentException naming the option and the rule if the value is not a plain identifier
	 */
	public static String check(String option, String value) {
		if (value == null || !IDENTIFIER.matcher(value).matches()) {
			throw new IllegalArgumentException(option + " must be a plain CQL identifier (a letter, then letters, "
					+ "digits or '_', at most 48 characters), was '" + value + "'");
		}
		String lower = value.toLowerCase(Locale.ROOT);
		if (RESERVED.contains(lower)) {
			throw new IllegalArgumentException(option + " must not be the reserved CQL word '" + value
					+ "'; choose another name");
		}
		return lower;
	}

}
