package io.cassandrajournal.serialization;

import java.io.IOException;
import java.io.Writer;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.SerializableString;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.exc.JacksonIOException;
import tools.jackson.core.sym.PropertyNameMatcher;
import tools.jackson.databind.node.ObjectNode;

/**
 * Where a {@link PropertyUpcaster} runs without a tree: one step applied to the token stream of the layer below it
 * (the parser of the stored text, or the previous step's layer), between the text and the deserializer. At the top
 * level of the event it drops the properties the step drops (and, in the first layer, the version property), exposes
 * renamed properties under their new names, replaces the type property by the renamed kind, and hands out the added
 * properties before the event's closing brace; everything below the top level passes through untouched. Added
 * properties and the renamed kind come from a small parser over a prepared object, switched in as the delegate while
 * its tokens last; a later layer sees them like any other top-level property.
 */
final class PropertyUpcastingParser extends OwnTokensParser {

	private static final int NOT_INJECTING = 0;

	private static final int INJECTING_KIND = 1;

	private static final int INJECTING_ADDED = 2;

	private final JsonParser below;

	private final @Nullable PropertyUpcaster step;

	private final boolean dropVersion;

	private final @Nullable ObjectNode kind;

	private int injecting = NOT_INJECTING;

	/** The new name of the renamed property whose name (then first value token) is the current token. */
	private @Nullable String renamed;

	/** Tokens left for which {@link #renamed} stands: its name token, then the first token of its value. */
	private int renamedTokens;

	/**
	 * @param below the layer below
	 * @param step the step, or {@code null} for a layer that only drops the version
	 * @param dropVersion whether to drop the top-level version property
	 */
	PropertyUpcastingParser(JsonParser below, @Nullable PropertyUpcaster step, boolean dropVersion) {
		super(below);
		this.below = below;
		this.step = step;
		this.dropVersion = dropVersion;
		this.kind = (step != null) ? step.kindProperty() : null;
	}

	@Override
	public JsonToken nextToken() throws JacksonException {
		if (this.renamedTokens > 0) {
			this.renamedTokens--;
		}
		if (this.injecting != NOT_INJECTING) {
			JsonToken token = this.delegate.nextToken();
			if (token != JsonToken.END_OBJECT || !this.delegate.streamReadContext().inRoot()) {
				return token;
			}
			JsonParser injected = this.delegate;
			this.delegate = this.below;
			injected.close();
			boolean added = this.injecting == INJECTING_ADDED;
			this.injecting = NOT_INJECTING;
			if (added) {
				return this.below.currentToken(); // the event's closing brace, where the additions went in
			}
		}
		return next(this.below.nextToken());
	}

	/** Applies the step to a token of the layer below. */
	private @Nullable JsonToken next(@Nullable JsonToken token) {
		JsonToken current = token;
		while (current == JsonToken.PROPERTY_NAME && topLevel()) {
			String name = this.below.currentName();
			if ((this.dropVersion && Upcasters.VERSION_PROPERTY.equals(name))
					|| (this.step != null && this.step.drops(name))) {
				this.below.nextToken();
				this.below.skipChildren();
				current = this.below.nextToken();
				continue;
			}
			if (this.step == null) {
				return current;
			}
			String to = this.step.renamed(name);
			if (to != null) {
				this.renamed = to;
				this.renamedTokens = 2;
				return current;
			}
			if (this.kind != null && name.equals(this.step.typeProperty())) {
				this.below.nextToken();
				this.below.skipChildren();
				return inject(this.kind, INJECTING_KIND);
			}
			return current;
		}
		if (current == JsonToken.END_OBJECT && this.step != null && !this.step.added().isEmpty()
				&& this.below.streamReadContext().inRoot()) {
			return inject(this.step.added(), INJECTING_ADDED);
		}
		return current;
	}

	/** Whether the layer below stands at a property of the event itself (not of a nested object). */
	private boolean topLevel() {
		TokenStreamContext context = this.below.streamReadContext();
		TokenStreamContext parent = context.getParent();
		return context.inObject() && parent != null && parent.inRoot();
	}

	/** Switches to the properties of {@code object} as the next tokens; returns the first. */
	private JsonToken inject(ObjectNode object, int what) {
		JsonParser injected = object.traverse(this.below.objectReadContext());
		injected.nextToken(); // its START_OBJECT: the properties go into the event's object
		this.delegate = injected;
		this.injecting = what;
		return injected.nextToken();
	}

	private boolean atRenamedName() {
		return this.renamedTokens == 2 && this.delegate.currentToken() == JsonToken.PROPERTY_NAME;
	}

	@Override
	public @Nullable String currentName() {
		return (this.renamedTokens > 0) ? this.renamed : this.delegate.currentName();
	}

	@Override
	public @Nullable JsonToken nextValue() throws JacksonException {
		JsonToken token = nextToken();
		return (token == JsonToken.PROPERTY_NAME) ? nextToken() : token;
	}

	@Override
	public @Nullable String nextName() throws JacksonException {
		return (nextToken() == JsonToken.PROPERTY_NAME) ? currentName() : null;
	}

	@Override
	public boolean nextName(SerializableString expected) throws JacksonException {
		return nextToken() == JsonToken.PROPERTY_NAME && expected.getValue().equals(currentName());
	}

	@Override
	public int nextNameMatch(PropertyNameMatcher matcher) throws JacksonException {
		nextToken();
		return currentNameMatch(matcher);
	}

	@Override
	public int currentNameMatch(PropertyNameMatcher matcher) {
		JsonToken token = this.delegate.currentToken();
		if (token == JsonToken.PROPERTY_NAME) {
			return matcher.matchName(currentName());
		}
		return (token == JsonToken.END_OBJECT) ? PropertyNameMatcher.MATCH_END_OBJECT : PropertyNameMatcher.MATCH_ODD_TOKEN;
	}

	@Override
	public String getString() throws JacksonException {
		return atRenamedName() ? this.renamed : this.delegate.getString();
	}

	@Override
	public boolean hasStringCharacters() {
		return !atRenamedName() && this.delegate.hasStringCharacters();
	}

	@Override
	public char[] getStringCharacters() throws JacksonException {
		return atRenamedName() ? this.renamed.toCharArray() : this.delegate.getStringCharacters();
	}

	@Override
	public int getStringLength() throws JacksonException {
		return atRenamedName() ? this.renamed.length() : this.delegate.getStringLength();
	}

	@Override
	public int getStringOffset() throws JacksonException {
		return atRenamedName() ? 0 : this.delegate.getStringOffset();
	}

	@Override
	public int getString(Writer writer) throws JacksonException {
		if (!atRenamedName()) {
			return this.delegate.getString(writer);
		}
		try {
			writer.write(this.renamed);
		}
		catch (IOException ex) {
			throw JacksonIOException.construct(ex);
		}
		return this.renamed.length();
	}

	@Override
	public @Nullable String getValueAsString() {
		return atRenamedName() ? this.renamed : this.delegate.getValueAsString();
	}

	@Override
	public @Nullable String getValueAsString(@Nullable String defaultValue) {
		return atRenamedName() ? this.renamed : this.delegate.getValueAsString(defaultValue);
	}

	@Override
	public void close() {
		if (this.delegate != this.below) {
			this.delegate.close();
		}
		this.below.close();
	}

}
