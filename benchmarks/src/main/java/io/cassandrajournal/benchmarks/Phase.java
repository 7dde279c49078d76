package io.cassandrajournal.benchmarks;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * A Java Flight Recorder event spanning one side's measured round of a workload, so that a recording of the
 * benchmark JVM can attribute CPU samples and allocation to a workload and side (see docs/benchmarks.md,
 * "Profiles"). Costs nothing when no recording runs.
 */
@Name("io.cassandrajournal.benchmarks.Phase")
@Label("Benchmark phase")
@Category("Benchmark")
@Description("One side's measured round of a workload")
final class Phase extends Event {

	@Label("Workload")
	String workload;

	@Label("Side")
	String side;

	@Label("Events")
	@Description("Events (or operations) the round processed")
	long events;

	private Phase(String workload, String side) {
		this.workload = workload;
		this.side = side;
	}

	/** @return a started phase of this workload's side ({@code ours}, {@code raw}, ...) */
	static Phase begin(String workload, String side) {
		Phase phase = new Phase(workload, side);
		phase.begin();
		return phase;
	}

	/** Ends the phase, recording how many events (or operations) it processed. */
	void end(long processed) {
		this.events = processed;
		commit();
	}

}
