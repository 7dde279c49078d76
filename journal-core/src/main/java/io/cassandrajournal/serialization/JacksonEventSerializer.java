package io.cassandrajournal.serialization;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TreeNode;
import tools.jackson.core.filter.FilteringParserDelegate;
import tools.jackson.core.filter.TokenFilter;
import tools.jackson.core.type.ResolvedType;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.exc.InvalidTypeIdException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.UnknownPayloadTypeException;

/**
 * The default {@link EventSerializer}, on Jackson 3. Event hierarchies map onto the reference format with
 * Jackson's own annotations:
 *
 * <pre>{@code
 * @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
 * @JsonSubTypes({ @JsonSubTypes.Type(value = Deposited.class, name = "deposited"),
 *                 @JsonSubTypes.Type(value = Withdrawn.class, name = "withdrawn") })
 * sealed interface AccountEvent permits Deposited, Withdrawn { }
 * record Deposited(long amount) implements AccountEvent { }   // {"kind":"deposited","amount":5}
 * }</pre>
 *
 * Unknown properties are ignored on read, so events written by a newer writer with extra fields still load.
 * <p>
 * <b>Versions.</b> A class annotated {@link PayloadVersion @PayloadVersion(n)} with {@code n > 1} is written
 * with the reserved property {@value Upcasters#VERSION_PROPERTY}{@code : n}; other classes are written as
 * before. On read, the {@link Upcasters} given to the constructor bring older payloads up to the current
 * version on the JSON tree before Jackson binds it ({@link #deserializeEvent} for events,
 * {@link #deserialize} for snapshots and durable state). A payload read as a class whose version is above the
 * one its chain reached fails to read, naming the kind and the missing version; a payload newer than its class
 * is read as it is (like unknown properties).
 * <p>
 * <b>Cost.</b> Only a payload that a general step of its kind's chain reads (its kind, at its version, or a
 * {@link PropertyUpcaster} followed by a general step) is parsed into a tree; every other payload is bound from its
 * text: a stamped one with its version property filtered out of the token stream (so a payload already at the
 * version its chain ends with, the usual case once a chain exists, costs what it cost before the chain was
 * registered), and one whose remaining steps are all {@link PropertyUpcaster}s through those steps applied to the
 * token stream. A payload without a stamp at its end but with {@code "_version"} somewhere in its text, or with a JSON
 * escape of one of that name's characters, goes to the tree, which finds a version stamped elsewhere or with its name
 * escaped (another writer).
 */
public final class JacksonEventSerializer implements EventSerializer {

	private static final String VERSION_MARK = "\"" + Upcasters.VERSION_PROPERTY + "\"";

	private static final ClassValue<Integer> VERSIONS = new ClassValue<>() {

		@Override
		protected Integer computeValue(Class<?> type) {
			PayloadVersion version = type.getAnnotation(PayloadVersion.class);
			if (version != null && version.value() < 1) {
				throw new IllegalArgumentException("@PayloadVersion(" + version.value() + ") on " + type.getName()
						+ ": versions start at 1");
			}
			return (version != null) ? version.value() : 1;
		}

	};

	private final JsonMapper mapper;

	/** Reads the trees upcasters work on, with exact decimals (see {@link TreeTokens}). */
	private final ObjectReader treeReader;

	private final Upcasters upcasters;

	/** One reader per requested type, so that a read does not look its deserializer up again. */
	private final Map<Class<?>, ObjectReader> readers = new ConcurrentHashMap<>();

	/** Uses a mapper that ignores unknown properties, and no upcasters. */
	public JacksonEventSerializer() {
		this(Upcasters.NONE);
	}

	/** @param upcasters the upcaster chains to run on read; uses a mapper that ignores unknown properties */
	public JacksonEventSerializer(Upcasters upcasters) {
		this(JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build(), upcasters);
	}

	/** @param mapper the mapper to use, for example the application's own */
	public JacksonEventSerializer(JsonMapper mapper) {
		this(mapper, Upcasters.NONE);
	}

	/**
	 * @param mapper the mapper to use, for example the application's own
	 * @param upcasters the upcaster chains to run on read
	 */
	public JacksonEventSerializer(JsonMapper mapper, Upcasters upcasters) {
		this.mapper = Objects.requireNonNull(mapper, "mapper");
		this.upcasters = Objects.requireNonNull(upcasters, "upcasters");
		this.treeReader = mapper.reader().with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
	}

	/** @return the upcaster chains this serializer runs on read */
	public Upcasters upcasters() {
		return this.upcasters;
	}

	/**
	 * Writes the value once; a class at a {@link PayloadVersion} above 1 gets its version appended to the object
	 * as its last property (where {@link #stampedVersionAtEnd} looks for it on read).
	 */
	@Override
	public String serialize(Object value) {
		Objects.requireNonNull(value, "payload");
		String json;
		try {
			json = this.mapper.writeValueAsString(value);
		}
		catch (JacksonException ex) {
			throw new JournalSerializationException("Cannot write " + value.getClass().getName() + " as JSON: "
					+ ex.getOriginalMessage(), ex);
		}
		int version = VERSIONS.get(value.getClass());
		return (version == 1) ? json : stamp(json, version, value.getClass());
	}

	/** Appends {@code "_version":n} as the last property of the written object, without a second write. */
	private static String stamp(String json, int version, Class<?> type) {
		int open = firstNonSpace(json);
		int close = lastNonSpace(json);
		if (open < 0 || json.charAt(open) != '{' || json.charAt(close) != '}') {
			throw new JournalSerializationException("Cannot stamp version " + version + " on " + type.getName()
					+ ": it is not written as a JSON object", null);
		}
		boolean empty = json.substring(open + 1, close).isBlank();
		return json.substring(0, close) + (empty ? "" : ",") + VERSION_MARK + ":" + version + json.substring(close);
	}

	private static int firstNonSpace(String json) {
		for (int i = 0; i < json.length(); i++) {
			if (!Character.isWhitespace(json.charAt(i))) {
				return i;
			}
		}
		return -1;
	}

	private static int lastNonSpace(String json) {
		for (int i = json.length() - 1; i >= 0; i--) {
			if (!Character.isWhitespace(json.charAt(i))) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Whether the payload ends with the version property, where {@link #serialize} (and, before it, a tree's
	 * {@code put}) writes it: a look at the last few characters instead of a scan of the whole text. A payload
	 * with the property elsewhere (not written by this library) is taken as version 1 unless it is parsed into a
	 * tree anyway (a step of its kind's chain reads version 1) or read as a class above version 1
	 * ({@link #checked} then looks again over the whole text).
	 */
	static boolean stampedVersionAtEnd(String json) {
		return versionAtEnd(json) != NOT_STAMPED;
	}

	/** {@link #versionAtEnd}: no version property at the end of the payload. */
	static final int NOT_STAMPED = -1;

	/**
	 * Whether the payload may hold the version property elsewhere than where {@link #versionAtEnd} looks: its name
	 * written plainly anywhere in the text, or a {@code \}{@code uXXXX} escape of one of its characters, which the
	 * name written otherwise than plainly must hold (JSON has no other escape for a letter or an underscore).
	 * Escapes of other characters (a non-ASCII or control character in a string) do not count, and writers escape
	 * no letter: an ordinary payload costs two scans of its text, no parse (docs/reliability.md, finding 31).
	 */
	static boolean mayHoldVersionElsewhere(String json) {
		return json.contains(VERSION_MARK) || escapesAVersionCharacter(json);
	}

	private static boolean escapesAVersionCharacter(String json) {
		for (int i = json.indexOf("\\u"); i >= 0 && i + 6 <= json.length(); i = json.indexOf("\\u", i + 2)) {
			int escaped = 0;
			for (int digit = i + 2; digit < i + 6 && escaped >= 0; digit++) {
				int value = Character.digit(json.charAt(digit), 16);
				escaped = (value < 0) ? -1 : (escaped << 4) | value;
			}
			if (escaped > 0 && Upcasters.VERSION_PROPERTY.indexOf(escaped) >= 0) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The version the payload ends with ({@link #stampedVersionAtEnd}).
	 * @return the version, {@link #NOT_STAMPED} when the payload does not end with the version property, and 0 when
	 * it does with a number that is no valid version (below 1 or too long: the tree path reports it)
	 */
	static int versionAtEnd(String json) {
		int i = lastNonSpace(json);
		if (i < 0 || json.charAt(i) != '}') {
			return NOT_STAMPED;
		}
		i--;
		while (i >= 0 && Character.isWhitespace(json.charAt(i))) {
			i--;
		}
		int digitsEnd = i;
		while (i >= 0 && Character.isDigit(json.charAt(i))) {
			i--;
		}
		if (i == digitsEnd) {
			return NOT_STAMPED;
		}
		int digitsStart = i + 1;
		while (i >= 0 && Character.isWhitespace(json.charAt(i))) {
			i--;
		}
		if (i < 0 || json.charAt(i) != ':') {
			return NOT_STAMPED;
		}
		i--;
		while (i >= 0 && Character.isWhitespace(json.charAt(i))) {
			i--;
		}
		if (!json.startsWith(VERSION_MARK, i - VERSION_MARK.length() + 1)) {
			return NOT_STAMPED;
		}
		if (digitsEnd - digitsStart >= 9) {
			return 0;
		}
		return Integer.parseInt(json, digitsStart, digitsEnd + 1, 10);
	}

	/** Reads one value, running the snapshot chain of {@code type} (snapshots and durable state read this way). */
	@Override
	public <T> T deserialize(String json, Class<T> type) {
		if (!this.upcasters.hasSnapshotUpcasters(type) && !stampedVersionAtEnd(json)) {
			return checked(bind(json, null, type), 1, null, json);
		}
		JsonNode tree = parse(json, type);
		if (!(tree instanceof ObjectNode object)) {
			return checked(bind(json, tree, type), 1, null, json);
		}
		Upcasters.Versioned upcast = this.upcasters.upcastSnapshot(object, type);
		return checked(bind(json, upcast.tree(), type), upcast.version(), null, json);
	}

	/**
	 * Reads one stored event, running the event chains: a split gives several values, in order. One pass over
	 * the text unless a general step of its kind's chain comes on its way: without upcasters, for a kind without a
	 * chain, or for a payload already at the version its chain ends with, Jackson binds the text (a stamped one with
	 * the version property filtered out); through declared steps only ({@link PropertyUpcaster}), it binds the text
	 * through those steps on the token stream; otherwise the payload is parsed into the tree the chain runs on.
	 */
	@Override
	public <T> List<T> deserializeEvent(String json, Class<T> type) {
		int stamped = versionAtEnd(json);
		if (stamped == NOT_STAMPED && !this.upcasters.hasEventUpcasters()) {
			return List.of(checked(bind(json, null, type), 1, null, json));
		}
		String kind = peekKind(json);
		if (stamped == NOT_STAMPED && !this.upcasters.hasChain(kind)) {
			// No stamp at the end and no chain: bound from the text, as without upcasters. For a kind with a chain, a
			// stamp written elsewhere than at the end (README, "Evolving events") is looked for below.
			return List.of(checked(bind(json, null, type), 1, null, json));
		}
		if (stamped >= 1 && !this.upcasters.hasStep(kind, stamped)) {
			// At the version its chain ends with (or a kind without a chain): no tree, the text without the version.
			return List.of(checked(bindWithoutVersion(json, type), stamped, kind, json));
		}
		if (stamped >= 1 || (stamped == NOT_STAMPED && !mayHoldVersionElsewhere(json))) {
			// The version is known without a tree: stamped at the end, or 1 when "_version" is nowhere in the text,
			// plain or escaped (one stamped elsewhere, or nested, is left to the tree below, which finds only the
			// top-level one).
			int version = (stamped == NOT_STAMPED) ? 1 : stamped;
			if (!this.upcasters.hasStep(kind, version)) {
				return List.of(checked(bind(json, null, type), version, kind, json));
			}
			UpcasterChain.Plan plan = this.upcasters.streamPlan(kind, version);
			if (plan != null) {
				// Declared steps only, to the end of the chain: run on the token stream, no tree.
				return List.of(checked(bindUpcast(json, plan, stamped != NOT_STAMPED, type), plan.endVersion(),
						plan.endKind(), json));
			}
		}
		if (!(parse(json, type) instanceof ObjectNode object)) {
			return List.of(checked(bind(json, null, type), 1, null, json));
		}
		List<Upcasters.Versioned> parts = this.upcasters.upcastEvent(object);
		if (parts.size() == 1) {
			return List.of(bindPart(json, parts.get(0), type));
		}
		List<T> values = new ArrayList<>(parts.size());
		for (Upcasters.Versioned part : parts) {
			values.add(bindPart(json, part, type));
		}
		return values;
	}

	private <T> T bindPart(String json, Upcasters.Versioned part, Class<T> type) {
		JsonNode kind = part.tree().get(this.upcasters.typeProperty());
		return checked(bind(json, part.tree(), type), part.version(),
				(kind != null && kind.isString()) ? kind.asString() : null, json);
	}

	/**
	 * The kind of a stored event without building a tree: the top-level type property, found by streaming over
	 * the top-level properties (the first one in payloads Jackson wrote); {@code null} when there is none or the
	 * text is not a JSON object.
	 */
	private @Nullable String peekKind(String json) {
		String typeProperty = this.upcasters.typeProperty();
		// Payloads Jackson wrote start {"kind":"...": read the kind off the text when it is plain (no escapes).
		int start = 2 + typeProperty.length() + 3;
		if (json.length() > start && json.startsWith("{\"") && json.startsWith(typeProperty, 2)
				&& json.startsWith("\":\"", 2 + typeProperty.length())) {
			int end = json.indexOf('"', start);
			if (end > 0 && json.lastIndexOf('\\', end) < start) {
				return json.substring(start, end);
			}
		}
		try (JsonParser parser = this.mapper.createParser(json)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				JsonToken value = parser.nextToken();
				if (typeProperty.equals(name)) {
					return (value == JsonToken.VALUE_STRING) ? parser.getString() : null;
				}
				parser.skipChildren();
			}
			return null;
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	private JsonNode parse(String json, Class<?> type) {
		try {
			// Exact decimals: the tree is bound through TreeTokens, which reports them as the text's parser would.
			return this.treeReader.readTree(json);
		}
		catch (JacksonException ex) {
			throw new JournalSerializationException("Cannot read stored payload as " + type.getName() + ": "
					+ ex.getOriginalMessage() + " (payload: " + abbreviate(json) + ")", ex);
		}
	}

	/** Binds the tree, or the stored text when there is no tree. */
	private <T> T bind(String json, @Nullable JsonNode tree, Class<T> type) {
		try {
			ObjectReader reader = reader(type);
			if (tree == null) {
				return reader.readValue(json);
			}
			try (JsonParser tokens = new TreeTokens(reader.treeAsTokens(tree))) {
				return reader.readValue(tokens);
			}
		}
		catch (JacksonException ex) {
			throw readFailure(json, type, ex);
		}
	}

	/** Drops the top-level version property from the token stream (nested properties of that name stay). */
	private static final TokenFilter WITHOUT_VERSION = new TokenFilter() {

		@Override
		public TokenFilter includeProperty(String name) {
			return Upcasters.VERSION_PROPERTY.equals(name) ? null : TokenFilter.INCLUDE_ALL;
		}

		/** The root object stays when the version was its only property ({@code {"_version":2}}, no fields). */
		@Override
		public boolean includeEmptyObject(boolean contentsFiltered) {
			return true;
		}

	};

	/**
	 * The stored text's tokens without the top-level version property, also for an application's deserializer that
	 * reads the event through {@code readValueAsTree()} or {@code readValueAs(..)}: the filter's own versions hand
	 * those to the parser below it, which would show the version property.
	 */
	private static final class WithoutVersion extends FilteringParserDelegate {

		WithoutVersion(JsonParser stored) {
			super(stored, WITHOUT_VERSION, TokenFilter.Inclusion.INCLUDE_ALL_AND_PATH, true);
		}

		@Override
		public <T extends TreeNode> T readValueAsTree() throws JacksonException {
			return objectReadContext().readTree(this);
		}

		@Override
		public <T> T readValueAs(Class<T> type) throws JacksonException {
			return objectReadContext().readValue(this, type);
		}

		@Override
		public <T> T readValueAs(TypeReference<T> type) throws JacksonException {
			return objectReadContext().readValue(this, type);
		}

		@Override
		public <T> T readValueAs(ResolvedType type) throws JacksonException {
			return objectReadContext().readValue(this, type);
		}

	}

	/**
	 * Binds the stored text without its top-level version property: what binding the tree with the property taken
	 * out gives ({@link Upcasters#takeVersion}), without building the tree (a mapper that fails on unknown properties
	 * or a class that collects them sees no version property either way).
	 */
	private <T> T bindWithoutVersion(String json, Class<T> type) {
		ObjectReader reader = reader(type);
		try (JsonParser parser = new WithoutVersion(reader.createParser(json))) {
			return reader.readValue(parser);
		}
		catch (JacksonException ex) {
			throw readFailure(json, type, ex);
		}
	}

	/**
	 * Binds the stored text through the plan's declared steps, each a layer on the token stream (the first also
	 * dropping the top-level version property of a stamped payload): what the steps give on the tree, without it.
	 */
	private <T> T bindUpcast(String json, UpcasterChain.Plan plan, boolean stamped, Class<T> type) {
		ObjectReader reader = reader(type);
		JsonParser parser = reader.createParser(json);
		boolean dropVersion = stamped;
		for (PropertyUpcaster step : plan.steps()) {
			parser = new PropertyUpcastingParser(parser, step, dropVersion);
			dropVersion = false;
		}
		try (JsonParser upcasting = parser) {
			return reader.readValue(upcasting);
		}
		catch (JacksonException ex) {
			throw readFailure(json, type, ex);
		}
	}

	private ObjectReader reader(Class<?> type) {
		return this.readers.computeIfAbsent(type, this.mapper::readerFor);
	}

	private static RuntimeException readFailure(String json, Class<?> type, JacksonException ex) {
		if (ex instanceof InvalidTypeIdException) {
			return new UnknownPayloadTypeException("Cannot read stored payload as " + type.getName() + ": "
					+ ex.getOriginalMessage() + " (payload: " + abbreviate(json) + ")", ex);
		}
		return new JournalSerializationException("Cannot read stored payload as " + type.getName() + ": "
				+ ex.getOriginalMessage() + " (payload: " + abbreviate(json) + ")", ex);
	}

	/**
	 * Refuses a value whose class is at a later version than the chain brought its payload to. A value bound from
	 * the text at "version 1" whose class is above 1 looks for the version property over the whole text first
	 * (a payload stamped by another writer somewhere else than at its end, or with its name escaped).
	 */
	private <T> T checked(T value, int reached, @Nullable String kind, String json) {
		int current = (value != null) ? VERSIONS.get(value.getClass()) : 1;
		if (reached < current && reached == 1 && mayHoldVersionElsewhere(json)) {
			JsonNode tree = parse(json, value.getClass());
			// Version 1 again (no top-level stamp: the text only looked as if it might hold one) falls through to
			// the refusal; looking again would loop until the stack overflowed.
			int found = (tree instanceof ObjectNode object) ? Upcasters.takeVersion(object) : 1;
			if (found != 1) {
				return checked(value, found, kind, json);
			}
		}
		if (reached < current) {
			String what = (kind != null) ? "kind '" + kind + "'" : value.getClass().getName();
			throw new JournalSerializationException("Stored payload of " + what + " is at version " + reached + " but "
					+ value.getClass().getName() + " is at version " + current + " and no upcaster reads " + what
					+ " at version " + reached + " (register one from version " + reached + " to " + (reached + 1)
					+ "; payload: " + abbreviate(json) + ")", null);
		}
		return value;
	}

	/**
	 * The stored type of a payload is the one its type property names ({@code @JsonTypeInfo}): payloads are read
	 * as the topmost supertype of {@code wanted} that carries {@code @JsonTypeInfo}, so a payload reaches a
	 * reader of {@code wanted} only when its type id resolves to {@code wanted} or a subtype. {@code String}
	 * (the stored text), {@code Object} (a tree of maps and lists) and {@code JsonNode} take every payload.
	 * A type without {@code @JsonTypeInfo} on it or a supertype has no stored type resolving to it.
	 */
	@Override
	public Optional<Class<?>> readTypeFor(Class<?> wanted) {
		if (wanted == String.class || wanted == Object.class || JsonNode.class.isAssignableFrom(wanted)) {
			return Optional.of(wanted);
		}
		Class<?> root = wanted.isAnnotationPresent(JsonTypeInfo.class) ? wanted : null;
		Set<Class<?>> supertypes = new LinkedHashSet<>();
		collectSupertypes(wanted, supertypes);
		for (Class<?> candidate : supertypes) {
			if (candidate.isAnnotationPresent(JsonTypeInfo.class) && (root == null || candidate.isAssignableFrom(root))) {
				root = candidate;
			}
		}
		return Optional.ofNullable(root);
	}

	private static void collectSupertypes(Class<?> type, Set<Class<?>> into) {
		for (Class<?> each : type.getInterfaces()) {
			if (into.add(each)) {
				collectSupertypes(each, into);
			}
		}
		Class<?> superclass = type.getSuperclass();
		if (superclass != null && superclass != Object.class && into.add(superclass)) {
			collectSupertypes(superclass, into);
		}
	}

	private static String abbreviate(String json) {
		return (json.length() > 200) ? json.substring(0, 200) + "..." : json;
	}

}
