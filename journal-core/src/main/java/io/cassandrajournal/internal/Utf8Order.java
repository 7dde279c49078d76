package io.cassandrajournal.internal;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;

/**
 * Cassandra sorts {@code text} clustering columns by their UTF-8 bytes, unsigned. Java's
 * {@code String.compareTo} compares UTF-16 code units, which differs for characters outside the Basic
 * Multilingual Plane; merges of Cassandra-ordered streams must use this order.
 */
public final class Utf8Order {

	public static final Comparator<String> COMPARATOR = Utf8Order::compare;

	private Utf8Order() {
	}

	public static int compare(String a, String b) {
		if (a.equals(b)) {
			return 0;
		}
		byte[] x = a.getBytes(StandardCharsets.UTF_8);
		byte[] y = b.getBytes(StandardCharsets.UTF_8);
		return java.util.Arrays.compareUnsigned(x, y);
	}

}
