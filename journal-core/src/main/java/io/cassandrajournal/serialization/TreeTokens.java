package io.cassandrajournal.serialization;

import java.math.BigDecimal;

import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The tokens of an upcast tree, with its numbers reported as the stored text's parser reports them, so that a value
 * bound after general upcaster steps is the value bound from the text without them. The tree is read with exact
 * decimals ({@code USE_BIG_DECIMAL_FOR_FLOATS}): a {@code BigDecimal} field gets {@code 12.50}, not the {@code 12.5}
 * of a double, and a decimal with more digits than a double holds keeps them. Here a decimal is a float of unknown
 * type again, as the text's parser has it until asked: a field of type {@code double}, {@code Object} or
 * {@code JsonNode} gets a double (or what the mapper's features choose), one of type {@code BigDecimal} the exact
 * value (docs/reliability.md, finding 31). An application's deserializer that reads the event as a tree or a value
 * ({@code readValueAsTree()}, {@code readValueAs(..)}) reads these tokens too.
 */
final class TreeTokens extends OwnTokensParser {

	TreeTokens(JsonParser tree) {
		super(tree);
	}

	private boolean atDecimal() {
		return this.delegate.currentToken() == JsonToken.VALUE_NUMBER_FLOAT
				&& this.delegate.getNumberType() == NumberType.BIG_DECIMAL;
	}

	@Override
	public NumberType getNumberType() {
		return atDecimal() ? NumberType.DOUBLE : this.delegate.getNumberType();
	}

	@Override
	public NumberTypeFP getNumberTypeFP() {
		return atDecimal() ? NumberTypeFP.UNKNOWN : this.delegate.getNumberTypeFP();
	}

	@Override
	public Number getNumberValue() {
		return atDecimal() ? (Number) this.delegate.getDoubleValue() : this.delegate.getNumberValue();
	}

	@Override
	public Object getNumberValueDeferred() {
		// The text's parser defers a float as its text, which the deserializer then reads as it is configured to.
		if (atDecimal()) {
			BigDecimal exact = this.delegate.getDecimalValue();
			return exact.toString();
		}
		return this.delegate.getNumberValueDeferred();
	}

}
