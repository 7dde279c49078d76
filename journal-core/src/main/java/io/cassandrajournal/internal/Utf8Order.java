package io.cassandrajournal.internal;

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

	/**
	 * UTF-8 byte order is code point order. UTF-16 code unit order agrees with it except where a surrogate
	 * (part of a supplementary character, U+10000 and above) meets a unit in U+E000..U+FFFF: there the
	 * surrogate sorts last. Compares without allocating.
	 */
	public static int compare(String a, String b) {
		int length = Math.min(a.length(), b.length());
		for (int i = 0; i < length; i++) {
			char x = a.charAt(i);
			char y = b.charAt(i);
			if (x != y) {
				boolean xs = Character.isSurrogate(x);
				boolean ys = Character.isSurrogate(y);
				if (xs == ys) {
					return x - y;
				}
				return xs ? 1 : -1;
			}
		}
		return a.length() - b.length();
	}


}
