package io.cassandrajournal.projection;

/**
 * A cursor write under a lease epoch older than the stored one, or by an instance that did not fence the cursor
 * first: another instance owns the segment now, so nothing was written. Where this fits:
 * {@link DurableStateOffsetStore} refuses such writes; the segment's runner stops at once.
 */
final class CursorFencedException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	CursorFencedException(String message) {
		super(message);
	}

}
