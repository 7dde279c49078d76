package io.cassandrajournal.spring.boot.projection;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean method a projection handler. The method takes one parameter: the payload type (events whose
 * payload is of another type are skipped and counted, not failed) or the envelope
 * {@code PersistentEvent<PayloadType>}; it returns {@code void} or a {@code CompletionStage}.
 *
 * <pre>{@code
 * @ProjectionHandler(name = "balances", tag = "account")
 * void on(AccountEvent.Deposited deposited) { ... }
 *
 * @ProjectionHandler(name = "balances", tag = "account")
 * void on(PersistentEvent<AccountEvent.Withdrawn> withdrawn) { ... }
 * }</pre>
 *
 * Methods sharing a name form one projection with one cursor, dispatched by payload type; they must
 * declare the same source. Unset settings take the defaults from {@code journal.cassandra.projections.*}.
 * A bad declaration fails start-up naming the bean, the method and the fix.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ProjectionHandler {

	/** @return the projection's name (part of its cursor identity) */
	String name();

	/** @return a single tag (canonical form: the tag itself) */
	String tag() default "";

	/** @return events with at least one of these tags */
	String[] any() default {};

	/** @return events with all of these tags */
	String[] all() default {};

	/** @return events with none of these tags */
	String[] not() default {};

	/** @return one persistenceId to follow instead of a tag filter */
	String persistenceId() default "";

	/** @return {@code retry-and-fail}, {@code retry-and-skip}, {@code fail} or {@code skip}; empty for the default */
	String recovery() default "";

	/** @return retries after the first attempt; -1 for the default */
	int maxRetries() default -1;

	/** @return the first retry's delay, such as {@code 2s}; empty for the default */
	String retryBackoff() default "";

	/** @return the cap of the retry delay, such as {@code 1m}; empty for the default */
	String maxRetryBackoff() default "";

	/** @return how long an idle projection waits between reads, such as {@code 500ms}; empty for the default */
	String pollInterval() default "";

	/**
	 * @return how many events may be handled at the same time, keyed by persistenceId (events of one entity
	 * never run in parallel and keep their order); 0 for the default ({@code 1}: one after the other)
	 */
	int concurrency() default 0;

	/**
	 * @return how many segments a by-tag projection is split into by persistenceId slice, each with its own cursor
	 * (with {@code journal.cassandra.projections.sharing.enabled}, each run by one instance at a time): a power of
	 * two from 1 to 1024; 0 for the default ({@code journal.cassandra.projections.segments}). A projection of one
	 * persistenceId has one segment. Changing it later starts new cursors (a replay from the beginning)
	 */
	int segments() default 0;

	/** @return whether the projection starts with the application */
	boolean autoStartup() default true;

	/**
	 * @return whether the projection re-reads from the beginning on every start of the application: for a view
	 * held in memory, which is empty after a restart while a durable cursor would resume after the events it was
	 * built from. Its cursor is then kept in this process's memory only: the durable cursor store is neither read
	 * nor written for it, so other instances and other projections keep their durable cursors. Set on any method
	 * of the projection, it applies to the whole projection
	 */
	boolean rebuildOnStart() default false;

}
