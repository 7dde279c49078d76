package io.cassandrajournal.journal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Checks every persistenceId, a page of 100 ids at a time, one id after another (a background
 * maintenance task should not compete with the application for Cassandra).
 */
final class ConsistencySweep {

	private static final int PAGE = 100;

	private ConsistencySweep() {
	}

	public static CompletionStage<Long> run(Journal journal, Consumer<ConsistencyReport> onGap) {
		return page(journal, null, onGap, 0L);
	}

	private static CompletionStage<Long> page(Journal journal, String afterId, Consumer<ConsistencyReport> onGap,
			long checked) {
		return journal.persistenceIds(afterId, PAGE).thenCompose((ids) -> {
			if (ids.isEmpty()) {
				return CompletableFuture.completedFuture(checked);
			}
			return checkEach(journal, ids, 0, onGap).thenCompose((ignored) -> (ids.size() < PAGE)
					? CompletableFuture.completedFuture(checked + ids.size())
					: page(journal, ids.get(ids.size() - 1), onGap, checked + ids.size()));
		});
	}

	private static CompletionStage<Void> checkEach(Journal journal, List<String> ids, int index,
			Consumer<ConsistencyReport> onGap) {
		if (index == ids.size()) {
			return CompletableFuture.completedFuture(null);
		}
		return journal.checkConsistency(ids.get(index)).thenCompose((report) -> {
			if (report.hasGap()) {
				onGap.accept(report);
			}
			return checkEach(journal, ids, index + 1, onGap);
		});
	}

}
