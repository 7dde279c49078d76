package io.cassandrajournal.projection;

/** What a projection did after one failed attempt. */
public enum FailureAction {

	/** It will try the event again after a backoff. */
	RETRY,

	/** It gave up on the event: dead letter, and on to the next. */
	SKIP,

	/** It stopped; its cursor stays before the event. */
	STOP

}
