package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fan-out segment's reset reports an entity's real failure before another entity's refusal, whichever order
 * {@link CompletableFuture#allOf} met them in: the owner releases the segment for the first only.
 */
class ResetInProgressExceptionTest {

	@Test
	void aRealFailureIsReportedBeforeARefusal() {
		IllegalStateException real = new IllegalStateException("cursor write failed");
		ResetInProgressException refusal = new ResetInProgressException("being reset already");
		List<CompletableFuture<Void>> each = List.of(CompletableFuture.failedFuture(refusal),
				CompletableFuture.completedFuture(null), CompletableFuture.failedFuture(new CompletionException(real)));

		Throwable reported = ResetInProgressException.worst(each, new CompletionException(refusal));

		assertThat(reported).isSameAs(real);
		assertThat(ResetInProgressException.isRefusal(reported)).isFalse();
	}

	@Test
	void refusalsAloneAreReportedAsARefusal() {
		ResetInProgressException refusal = new ResetInProgressException("being reset already");
		List<CompletableFuture<Void>> each = List.of(CompletableFuture.failedFuture(refusal),
				CompletableFuture.completedFuture(null));

		Throwable reported = ResetInProgressException.worst(each, new CompletionException(refusal));

		assertThat(ResetInProgressException.isRefusal(reported)).isTrue();
		assertThat(reported).isInstanceOf(IllegalStateException.class);
	}

}
