package io.cassandrajournal.serialization;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The current version of an event, snapshot or durable-state class's stored shape. Without it a class is at
 * version 1. {@link JacksonEventSerializer} stamps a version above 1 into the stored JSON object as the
 * reserved property {@value Upcasters#VERSION_PROPERTY}; a payload without it is at version 1, so classes at
 * version 1 are stored byte-for-byte as before. On read, {@link EventUpcaster}s bring older payloads up to
 * this version; a payload older than its class with no upcaster for its version fails to read.
 *
 * <pre>{@code
 * @PayloadVersion(3)
 * record FundsAdded(long amountCents, String currency) implements AccountEvent { }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface PayloadVersion {

	/** @return the class's current version, 1 or more */
	int value();

}
