package io.cassandrajournal.sample;

/**
 * The business rule failures of the account API.
 */
public final class AccountExceptions {

	private AccountExceptions() {
	}

	/** The account does not exist (404). */
	public static class NotFound extends RuntimeException {

		private static final long serialVersionUID = 1L;

		public NotFound(String id) {
			super("Account '" + id + "' does not exist");
		}

	}

	/** The account exists already (409). */
	public static class AlreadyExists extends RuntimeException {

		private static final long serialVersionUID = 1L;

		public AlreadyExists(String id) {
			super("Account '" + id + "' already exists");
		}

	}

	/** The withdrawal would make the balance negative (422). */
	public static class InsufficientFunds extends RuntimeException {

		private static final long serialVersionUID = 1L;

		public InsufficientFunds(String id, long balance, long amount) {
			super("Account '" + id + "' has a balance of " + balance + ", less than the " + amount + " to withdraw");
		}

	}

	/** The amount is not a positive whole number that fits (422). */
	public static class InvalidAmount extends RuntimeException {

		private static final long serialVersionUID = 1L;

		public InvalidAmount(String message) {
			super(message);
		}

	}

	/** The deposit would take the balance past the largest amount an account can hold (422). */
	public static class BalanceLimit extends RuntimeException {

		private static final long serialVersionUID = 1L;

		public BalanceLimit(String id, long balance, long amount) {
			super("Account '" + id + "' has a balance of " + balance + "; depositing " + amount
					+ " would exceed the largest balance, " + Long.MAX_VALUE);
		}

	}

}
