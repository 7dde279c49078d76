package io.cassandrajournal.sample;

import java.math.BigInteger;

import tools.jackson.databind.JsonNode;

/**
 * Reads an amount from a request body: a JSON integer from 1 to {@link Long#MAX_VALUE}. A fraction ({@code 2.5},
 * also {@code 2.0}), an exponent, a string, a missing or a negative amount is rejected with
 * {@link AccountExceptions.InvalidAmount} (422) instead of being coerced or truncated.
 */
final class Amounts {

	private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

	private Amounts() {
	}

	static long positive(AccountController.AmountRequest request) {
		JsonNode amount = (request != null) ? request.amount() : null;
		if (amount == null || amount.isNull() || amount.isMissingNode()) {
			throw new AccountExceptions.InvalidAmount("amount is required: a positive whole number");
		}
		if (!amount.isIntegralNumber()) {
			throw new AccountExceptions.InvalidAmount("amount must be a positive whole number written without a fraction, "
					+ "an exponent or quotes, was " + abbreviate(amount.toString()));
		}
		BigInteger value = amount.bigIntegerValue();
		if (value.signum() <= 0 || value.compareTo(MAX) > 0) {
			throw new AccountExceptions.InvalidAmount(
					"amount must be between 1 and " + Long.MAX_VALUE + ", was " + abbreviate(value.toString()));
		}
		return value.longValueExact();
	}

	private static String abbreviate(String text) {
		return (text.length() <= 40) ? text : text.substring(0, 40) + "...";
	}

}
