package io.cassandrajournal.retention;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;

/**
 * Runs a {@link RetentionPolicy} over every entity of {@code all_persistence_ids}, a page of ids at a time, with
 * {@link RetentionPolicy#parallelism()} entities at once, then over the tag index buckets.
 * <ul>
 * <li>{@link #dryRun}: reads only, and reports what a run would delete (entities, events, snapshots,
 * buckets).</li>
 * <li>{@link #run}: deletes, tells a progress listener the running totals after each page, and stores them with
 * the last persistenceId done in the durable state store under {@code retention:<name>}. A run that stopped
 * part-way (a crash, a failure) resumes after that id on the next call with the same name; a completed run
 * starts from the first id. Every step is idempotent, so a page done twice deletes nothing more, and a re-run
 * of a completed policy reports zeros. Two runs of the same name at once: the second one's position write
 * conflicts ({@link io.cassandrajournal.state.DurableStateConflictException}) and it stops.</li>
 * </ul>
 * The dry run and a run started right after it on an unchanged journal report the same totals; appends and
 * snapshots in between change both, as does the clock for tag buckets.
 */
public final class RetentionRunner {

	private static final Logger logger = LoggerFactory.getLogger(RetentionRunner.class);

	private static final String KEY_PREFIX = "retention:";

	private final JournalCleanup cleanup;

	private final DurableStateStore positions;

	private final Clock clock;

	private RetentionRunner(JournalCleanup cleanup, DurableStateStore positions, Clock clock) {
		this.cleanup = cleanup;
		this.positions = positions;
		this.clock = clock;
	}

	/**
	 * @param cleanup does the deletions
	 * @param positions where runs store their position (the projections' durable state store will do)
	 * @param clock decides which tag buckets are old
	 * @return a runner
	 */
	public static RetentionRunner create(JournalCleanup cleanup, DurableStateStore positions, Clock clock) {
		return new RetentionRunner(Objects.requireNonNull(cleanup, "cleanup"),
				Objects.requireNonNull(positions, "positions"), Objects.requireNonNull(clock, "clock"));
	}

	/**
	 * @param policy what to delete
	 * @return what a run would delete now; deletes nothing and stores nothing
	 */
	public CompletionStage<RetentionReport> dryRun(RetentionPolicy policy) {
		return pages(policy, true, null, RetentionReport.EMPTY, (report) -> CompletableFuture.completedFuture(null));
	}

	/**
	 * @param name the run's name (its position's key is {@code retention:<name>})
	 * @return the position stored by the last run of that name, if any
	 */
	public CompletionStage<Optional<RetentionReport>> position(String name) {
		return this.positions.get(KEY_PREFIX + name, RetentionReport.class).thenApply((state) -> state.map(DurableState::value));
	}

	/**
	 * Runs the policy, resuming a run of the same name that did not complete.
	 * @param name the run's name
	 * @param policy what to delete
	 * @param progress told the running totals after each page and at the end (on a driver thread: must not
	 * block); its exceptions are logged and ignored
	 * @return the totals of the whole run (including the part done before a resume)
	 */
	public CompletionStage<RetentionReport> run(String name, RetentionPolicy policy, Consumer<RetentionReport> progress) {
		String key = KEY_PREFIX + Objects.requireNonNull(name, "name");
		return this.positions.get(key, RetentionReport.class).thenCompose((stored) -> {
			AtomicLong revision = new AtomicLong(stored.map(DurableState::revision).orElse(0L));
			RetentionReport from = stored.map(DurableState::value)
				.filter((report) -> !report.complete())
				.orElse(RetentionReport.EMPTY);
			if (from != RetentionReport.EMPTY) {
				logger.info("Retention run '{}' resumes after '{}' ({})", name, from.after(), from);
			}
			return pages(policy, false, from.after(), from, (report) -> this.positions
				.upsert(key, revision.incrementAndGet(), report)
				.thenRun(() -> tell(progress, report)));
		});
	}

	private static void tell(Consumer<RetentionReport> progress, RetentionReport report) {
		try {
			progress.accept(report);
		}
		catch (RuntimeException ex) {
			logger.warn("Retention progress listener failed on {}", report, ex);
		}
	}

	private CompletionStage<RetentionReport> pages(RetentionPolicy policy, boolean dry, @Nullable String after,
			RetentionReport soFar, java.util.function.Function<RetentionReport, CompletionStage<Void>> save) {
		return this.cleanup.journal().persistenceIds(after, policy.pageSize()).thenCompose((ids) -> {
			if (ids.isEmpty()) {
				return finish(policy, dry, soFar, save);
			}
			return groups(ids, 0, policy, dry, RetentionReport.EMPTY).thenCompose((page) -> {
				String last = ids.get(ids.size() - 1);
				RetentionReport total = soFar.plus(page).at(last, false);
				return save.apply(total).thenCompose((ignored) -> (ids.size() < policy.pageSize())
						? finish(policy, dry, total, save) : pages(policy, dry, last, total, save));
			});
		});
	}

	private CompletionStage<RetentionReport> groups(List<String> ids, int from, RetentionPolicy policy, boolean dry,
			RetentionReport soFar) {
		if (from >= ids.size()) {
			return CompletableFuture.completedFuture(soFar);
		}
		int to = Math.min(ids.size(), from + policy.parallelism());
		List<CompletableFuture<RetentionReport>> group = new ArrayList<>(to - from);
		for (String id : ids.subList(from, to)) {
			group.add(entity(id, policy, dry).toCompletableFuture());
		}
		return CompletableFuture.allOf(group.toArray(CompletableFuture[]::new)).thenCompose((ignored) -> {
			RetentionReport sum = soFar;
			for (CompletableFuture<RetentionReport> one : group) {
				sum = sum.plus(one.join());
			}
			return groups(ids, to, policy, dry, sum);
		});
	}

	private CompletionStage<RetentionReport> entity(String id, RetentionPolicy policy, boolean dry) {
		if (policy.deletesEntity(id)) {
			CompletionStage<SnapshotCut> before = this.cleanup.planSnapshotCut(id, 1);
			if (dry) {
				return before.thenCombine(this.cleanup.journal().highestSequenceNr(id),
						(cut, head) -> deleted(cut, head, head > 0));
			}
			return before.thenCompose((cut) -> this.cleanup.deleteEntity(id)
				.thenApply((deletion) -> deleted(cut, deletion.eventsDeletedTo(), deletion.removed())));
		}
		if (policy.keepSnapshots() > 0) {
			return (dry ? this.cleanup.planSnapshotCut(id, policy.keepSnapshots())
					: this.cleanup.deleteBeforeSnapshot(id, policy.keepSnapshots()))
				.thenApply((cut) -> new RetentionReport(1, 0, cut.deletesSomething() ? 1 : 0, cut.events(),
						cut.snapshotsDeleted(), 0, null, false));
		}
		return CompletableFuture.completedFuture(new RetentionReport(1, 0, 0, 0, 0, 0, null, false));
	}

	/** An entity deleted up to {@code head}: the events after its mark, and every snapshot if it is gone. */
	private static RetentionReport deleted(SnapshotCut before, long head, boolean removed) {
		long snapshots = removed ? before.snapshotsKept() + before.snapshotsDeleted() : 0;
		return new RetentionReport(1, (removed && head > 0) ? 1 : 0, 0, Math.max(0, head - before.alreadyDeletedTo()),
				snapshots, 0, null, false);
	}

	private CompletionStage<RetentionReport> finish(RetentionPolicy policy, boolean dry, RetentionReport total,
			java.util.function.Function<RetentionReport, CompletionStage<Void>> save) {
		CompletionStage<Integer> buckets;
		if (policy.tagBucketsOlderThan().isEmpty()) {
			buckets = CompletableFuture.completedFuture(0);
		}
		else {
			Instant before = this.clock.instant().minus(policy.tagBucketsOlderThan().get());
			buckets = (dry ? this.cleanup.planTagBuckets(before) : this.cleanup.dropTagBucketsBefore(before))
				.thenApply(List::size);
		}
		return buckets.thenCompose((count) -> {
			RetentionReport done = total.plus(new RetentionReport(0, 0, 0, 0, 0, count, null, false))
				.at(total.after(), true);
			return save.apply(done).thenApply((ignored) -> done);
		});
	}

}
