package io.cassandrajournal.projection;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.query.TagOffset;

/**
 * An offset store that passes every call to another: a test overrides the one call it makes misbehave (a load that
 * never answers, a save that throws) and leaves the others to the store it wraps. {@link #reset} is the interface's
 * own, through this store's {@link #save} and {@link #delete}.
 */
class DelegatingOffsetStore implements OffsetStore {

	private final OffsetStore delegate;

	/** @param delegate the store every call goes to unless overridden */
	DelegatingOffsetStore(OffsetStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
		return this.delegate.load(id);
	}

	@Override
	public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
		return this.delegate.save(id, offset);
	}

	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		return this.delegate.delete(id);
	}

}
