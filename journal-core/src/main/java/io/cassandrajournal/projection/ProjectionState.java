package io.cassandrajournal.projection;

/** Where a projection is. */
public enum ProjectionState {

	/** Created or stopped; not reading. */
	STOPPED,

	/** Reading and handling events. */
	RUNNING,

	/** Paused by an operator; keeps its cursor, reads nothing until resumed. */
	PAUSED,

	/** Retrying a failed event. */
	FAILING,

	/** Stopped by its recovery strategy at an event; restarting resumes at that event. */
	FAILED

}
