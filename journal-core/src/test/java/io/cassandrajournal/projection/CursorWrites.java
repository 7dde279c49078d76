package io.cassandrajournal.projection;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;

/**
 * A {@link DurableStateStore} that tells a listener of every cursor write (key, revision, offset, epoch, outcome)
 * once its outcome is known, and hands everything to the store it wraps. The tests of shared projections
 * (SharedProjectionsIT, SharedFanOutIT, SharedProjectionMain) check with it that per cursor the stored epoch and
 * offset never go back. A write's offset and epoch are read from its JSON, as the store writes it, never from the
 * class the offset store hands over: each of those tests once cast what was not a {@code StoredCursor} to
 * {@link TagOffset}, and a cursor record of another class (commit f6d73bf) then threw inside every fence, so no
 * segment kept an owner (docs/reliability.md, finding 26).
 */
final class CursorWrites implements DurableStateStore {

	/** Told of one cursor write once its outcome is known. */
	@FunctionalInterface
	interface Listener {

		/**
		 * @param key the durable state key
		 * @param revision the revision written
		 * @param offset the cursor's offset
		 * @param epoch the lease epoch it was written under (0 without)
		 * @param error why it failed, {@code null} when applied
		 */
		void written(String key, long revision, TagOffset offset, long epoch, @Nullable Throwable error);

	}

	/** Reads a payload as the store writes it (the tests' stores use the default serializer). */
	private static final JacksonEventSerializer JSON = new JacksonEventSerializer();

	private final DurableStateStore delegate;

	private final Listener listener;

	/**
	 * @param delegate the store written to
	 * @param listener told of every write
	 */
	CursorWrites(DurableStateStore delegate, Listener listener) {
		this.delegate = delegate;
		this.listener = listener;
	}

	@Override
	public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
		return this.delegate.get(persistenceId, type);
	}

	@Override
	public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
		DurableStateOffsetStore.Cursor cursor;
		try {
			cursor = JSON.deserialize(JSON.serialize(value), DurableStateOffsetStore.StoredCursor.class).cursor();
		}
		catch (RuntimeException ex) {
			// Not a cursor: the write goes on unrecorded, so a test sees its own assertions fail, not a stalled fence.
			return this.delegate.upsert(persistenceId, revision, value);
		}
		TagOffset offset = cursor.offset();
		long epoch = cursor.epoch();
		return this.delegate.upsert(persistenceId, revision, value)
			.whenComplete((ok, error) -> this.listener.written(persistenceId, revision, offset, epoch, error));
	}

	@Override
	public CompletionStage<Void> delete(String persistenceId, long revision) {
		return this.delegate.delete(persistenceId, revision);
	}

}
