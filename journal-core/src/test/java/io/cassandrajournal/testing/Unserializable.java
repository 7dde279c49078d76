package io.cassandrajournal.testing;

/** A payload Jackson cannot write: its only property throws. */
public final class Unserializable {

	public String getValue() {
		throw new IllegalStateException("cannot be read");
	}

}
