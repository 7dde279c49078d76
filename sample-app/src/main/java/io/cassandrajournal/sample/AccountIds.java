package io.cassandrajournal.sample;

/**
 * The rules for an account id (a segment of the URL): 1 to {@value #MAX_LENGTH} characters, not blank, no
 * control characters, no slash or backslash. Anything else is a 400 before a command runs, so nothing is appended for it. Letters of every
 * script and punctuation are fine; pages that show ids must treat them as text (the status page does).
 */
final class AccountIds {

	/** The longest account id, in UTF-16 code units. */
	static final int MAX_LENGTH = 200;

	private AccountIds() {
	}

	static String check(String id) {
		if (id == null || id.isBlank()) {
			throw new IllegalArgumentException("The account id must not be blank");
		}
		if (id.length() > MAX_LENGTH) {
			throw new IllegalArgumentException(
					"The account id must be at most " + MAX_LENGTH + " characters, was " + id.length());
		}
		if (id.indexOf('/') >= 0 || id.indexOf('\\') >= 0) {
			throw new IllegalArgumentException("The account id must not contain a slash or a backslash");
		}
		for (int i = 0; i < id.length(); i++) {
			if (Character.isISOControl(id.charAt(i))) {
				throw new IllegalArgumentException("The account id must not contain control characters (at index " + i + ")");
			}
		}
		return id;
	}

}
