package io.cassandrajournal.sample;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * The account events, stored in the reference format: {@code {"kind":"deposited","amount":25}}.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({ @JsonSubTypes.Type(value = AccountEvent.Opened.class, name = "opened"),
		@JsonSubTypes.Type(value = AccountEvent.Deposited.class, name = "deposited"),
		@JsonSubTypes.Type(value = AccountEvent.Withdrawn.class, name = "withdrawn") })
public sealed interface AccountEvent {

	/** The account was opened. */
	record Opened() implements AccountEvent {
	}

	/** Money came in. */
	record Deposited(long amount) implements AccountEvent {
	}

	/** Money went out. */
	record Withdrawn(long amount) implements AccountEvent {
	}

}
