package io.cassandrajournal.spring.boot.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import io.cassandrajournal.retention.RetentionPolicy;
import io.cassandrajournal.retention.RetentionReport;
import io.cassandrajournal.retention.RetentionRunner;

/**
 * {@code /actuator/retention}, off by default ({@code management.endpoint.retention.access=unrestricted} and
 * exposure turn it on): a read is a dry run of the configured policy plus the last run's stored position; a
 * write with {@code {"dryRun": false}} starts a run named {@value #RUN_NAME} in the background (one at a time; it
 * resumes an unfinished one) and answers at once; without it, a write is a dry run too.
 */
@Endpoint(id = "retention", defaultAccess = Access.NONE)
public class RetentionEndpoint {

	/** The name of runs started here (their position: {@code retention:actuator} in durable state). */
	public static final String RUN_NAME = "actuator";

	private static final Logger logger = LoggerFactory.getLogger(RetentionEndpoint.class);

	private final RetentionRunner runner;

	private final RetentionPolicy policy;

	private final AtomicBoolean running = new AtomicBoolean();

	private final AtomicReference<@Nullable String> lastError = new AtomicReference<>();

	public RetentionEndpoint(RetentionRunner runner, RetentionPolicy policy) {
		this.runner = runner;
		this.policy = policy;
	}

	/** @return the policy, a dry run's report, whether a run is going on, and the stored position */
	@ReadOperation
	public Map<String, Object> retention() {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("policy", this.policy.toString());
		body.put("dryRun", this.runner.dryRun(this.policy).toCompletableFuture().join());
		body.put("running", this.running.get());
		this.runner.position(RUN_NAME).toCompletableFuture().join().ifPresent((p) -> body.put("position", p));
		String error = this.lastError.get();
		if (error != null) {
			body.put("lastError", error);
		}
		return body;
	}

	/**
	 * @param dryRun {@code false} to delete; anything else (or nothing) reports only
	 * @return a dry run's report, or whether the run was started
	 */
	@WriteOperation
	public Map<String, Object> run(@Nullable Boolean dryRun) {
		if (!Boolean.FALSE.equals(dryRun)) {
			return Map.of("dryRun", this.runner.dryRun(this.policy).toCompletableFuture().join());
		}
		if (!this.running.compareAndSet(false, true)) {
			return Map.of("started", false, "reason", "a run is going on");
		}
		this.lastError.set(null);
		this.runner.run(RUN_NAME, this.policy, (progress) -> logger.info("Retention run '{}': {}", RUN_NAME, progress))
			.whenComplete((report, error) -> {
				this.running.set(false);
				if (error != null) {
					this.lastError.set(String.valueOf(error.getMessage()));
					logger.warn("Retention run '{}' failed; the next run resumes at its stored position", RUN_NAME,
							error);
				}
				else {
					logger.info("Retention run '{}' completed: {}", RUN_NAME, report);
				}
			});
		return Map.of("started", true, "name", RUN_NAME);
	}

}
