package io.cassandrajournal.spring.boot.health;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.projection.ProjectionStatus;
import io.cassandrajournal.spring.boot.actuate.ProjectionViews;

/**
 * Every projection's state as health details; DOWN when a projection is in one of the configured states
 * (by default: stopped by its recovery strategy).
 */
public class ProjectionsHealthIndicator extends AbstractHealthIndicator {

	private final ProjectionEngine engine;

	private final Set<ProjectionState> downStates;

	/**
	 * @param engine the projection engine
	 * @param downStates the states that make the health DOWN (empty: never)
	 */
	public ProjectionsHealthIndicator(ProjectionEngine engine, Set<ProjectionState> downStates) {
		super("Projections health check failed");
		this.engine = engine;
		this.downStates = Set.copyOf(downStates);
	}

	/** @return the states that make the health DOWN */
	public Set<ProjectionState> downStates() {
		return this.downStates;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		boolean down = false;
		Map<String, Object> projections = new LinkedHashMap<>();
		for (ProjectionControl control : this.engine.projections()) {
			ProjectionStatus status = control.status();
			projections.put(status.id().name(), ProjectionViews.status(status));
			down |= this.downStates.contains(status.state());
		}
		builder.status(down ? "DOWN" : "UP").withDetail("projections", projections);
	}

}
