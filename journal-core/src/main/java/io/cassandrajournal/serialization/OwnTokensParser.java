package io.cassandrajournal.serialization;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.TreeNode;
import tools.jackson.core.type.ResolvedType;
import tools.jackson.core.type.TypeReference;
import tools.jackson.core.util.JsonParserDelegate;

/**
 * A parser layer whose tokens differ from the layer below it, also for an application's deserializer that reads the
 * event as a tree or a value: Jackson's delegate hands {@code readValueAsTree()} and {@code readValueAs(..)} to the
 * parser below, which would bind what this layer changes as if it were not there (docs/reliability.md, finding 31).
 */
abstract class OwnTokensParser extends JsonParserDelegate {

	OwnTokensParser(JsonParser below) {
		super(below);
	}

	@Override
	public final <T extends TreeNode> T readValueAsTree() throws JacksonException {
		return objectReadContext().readTree(this);
	}

	@Override
	public final <T> T readValueAs(Class<T> type) throws JacksonException {
		return objectReadContext().readValue(this, type);
	}

	@Override
	public final <T> T readValueAs(TypeReference<T> type) throws JacksonException {
		return objectReadContext().readValue(this, type);
	}

	@Override
	public final <T> T readValueAs(ResolvedType type) throws JacksonException {
		return objectReadContext().readValue(this, type);
	}

}
