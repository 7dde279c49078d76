package io.cassandrajournal.spring.boot.projection;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/** Events in the reference format. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({ @JsonSubTypes.Type(value = TestEvents.Deposited.class, name = "deposited"),
		@JsonSubTypes.Type(value = TestEvents.Withdrawn.class, name = "withdrawn") })
public sealed interface TestEvents {

	record Deposited(long amount) implements TestEvents {
	}

	record Withdrawn(long amount) implements TestEvents {
	}

}
