package io.cassandrajournal.testing;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * The reference documentation's example events, in its JSON format: {@code {"kind":"deposited","amount":5}}.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({ @JsonSubTypes.Type(value = AccountEvent.Opened.class, name = "opened"),
		@JsonSubTypes.Type(value = AccountEvent.Deposited.class, name = "deposited"),
		@JsonSubTypes.Type(value = AccountEvent.Withdrawn.class, name = "withdrawn") })
public sealed interface AccountEvent {

	record Opened() implements AccountEvent {
	}

	record Deposited(long amount) implements AccountEvent {
	}

	record Withdrawn(long amount) implements AccountEvent {
	}

}
