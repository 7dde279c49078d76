package io.cassandrajournal.serialization;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import io.cassandrajournal.JournalSerializationException;

/**
 * The upcaster chains a {@link JacksonEventSerializer} runs on read: for events, one chain per kind (the
 * value of the type property, {@code kind} in the reference format), from {@link EventUpcaster}s; for
 * snapshots and durable state, one chain per state class. Built once, checked when built: within a chain the
 * versions must follow each other without a gap (upcasters from v1 and v3 but not v2 is an error at build
 * time), and two upcasters for the same kind and version are an error.
 * <p>
 * A stored payload's version is the reserved property {@value #VERSION_PROPERTY} of its JSON object, 1 when
 * absent. The reference TypeScript implementation stores {@code JSON.stringify(event)} and reads with
 * {@code JSON.parse}, which keeps an extra property as one more field of the object; its handlers match on
 * {@code kind} and read the fields they name, so a stamped payload reads there as before (the upcasting
 * itself happens only in this library).
 */
public final class Upcasters {

	/** The reserved JSON property that carries a payload's version when it is above 1. */
	public static final String VERSION_PROPERTY = "_version";

	/** No upcasters: payloads are read as stored. */
	public static final Upcasters NONE = builder().build();

	private final String typeProperty;

	/** One chain per kind, its steps by version, with what streams from each version (looked up once per event). */
	private final Map<String, UpcasterChain> events;

	private final Map<Class<?>, Map<Integer, UnaryOperator<ObjectNode>>> snapshots;

	private Upcasters(Builder builder) {
		this.typeProperty = builder.typeProperty;
		Map<String, UpcasterChain> events = new HashMap<>();
		builder.events.forEach((kind, steps) -> events.put(kind, new UpcasterChain(steps, this.typeProperty)));
		this.events = Map.copyOf(events);
		this.events.forEach((kind, chain) -> chain.computePlans(kind, this.events));
		this.snapshots = Map.copyOf(builder.snapshots);
	}

	/**
	 * @return the declared steps a payload of this kind at this version goes through on its token stream, or
	 * {@code null} when no step reads it or a general step (a function on the tree) comes on the way
	 */
	UpcasterChain.@Nullable Plan streamPlan(@Nullable String kind, int version) {
		UpcasterChain chain = (kind != null) ? this.events.get(kind) : null;
		return (chain != null) ? chain.plan(version) : null;
	}

	/** @return a builder for the event type property {@code kind} */
	public static Builder builder() {
		return new Builder();
	}

	/** @return whether no upcaster is registered */
	public boolean isEmpty() {
		return this.events.isEmpty() && this.snapshots.isEmpty();
	}

	String typeProperty() {
		return this.typeProperty;
	}

	boolean hasEventUpcasters() {
		return !this.events.isEmpty();
	}

	/**
	 * @return whether this kind has a chain, from any version: a payload not stamped at the end of its text may carry
	 * its version elsewhere (another writer), and only the tree finds it there
	 */
	boolean hasChain(@Nullable String kind) {
		return kind != null && this.events.containsKey(kind);
	}

	/** @return whether a step of this kind's chain reads this version (so the payload needs the tree) */
	boolean hasStep(@Nullable String kind, int version) {
		UpcasterChain chain = (kind != null) ? this.events.get(kind) : null;
		return chain != null && chain.step(version) != null;
	}

	boolean hasSnapshotUpcasters(Class<?> type) {
		return this.snapshots.containsKey(type);
	}

	/** A payload tree at the version the chain brought it to. */
	record Versioned(ObjectNode tree, int version) {
	}

	/**
	 * Runs the event chains on one stored event.
	 * @param tree the stored event; its version property is removed
	 * @return its parts at the versions the chains reached, in order
	 */
	List<Versioned> upcastEvent(ObjectNode tree) {
		List<Versioned> out = new ArrayList<>(1);
		upcastEvent(tree, takeVersion(tree), out);
		return out;
	}

	private void upcastEvent(ObjectNode tree, int version, List<Versioned> out) {
		ObjectNode current = tree;
		int at = version;
		while (true) {
			JsonNode kindNode = current.get(this.typeProperty);
			UpcasterChain chain = (kindNode != null && kindNode.isString()) ? this.events.get(kindNode.asString())
					: null;
			EventUpcaster step = (chain != null) ? chain.step(at) : null;
			if (step == null) {
				out.add(new Versioned(current, at));
				return;
			}
			List<ObjectNode> parts = run(step, current, at);
			if (parts.size() != 1) {
				for (ObjectNode part : parts) {
					upcastEvent(part, at + 1, out);
				}
				return;
			}
			current = parts.get(0);
			at++;
		}
	}

	/** Runs one step; the name for an error message is built only when the step fails (this runs per event). */
	private static List<ObjectNode> run(EventUpcaster step, ObjectNode tree, int version) {
		List<ObjectNode> parts;
		try {
			parts = step.upcast(tree);
		}
		catch (RuntimeException ex) {
			throw new JournalSerializationException(which(step, version) + " failed: " + ex, ex);
		}
		if (parts == null) {
			throw new JournalSerializationException(which(step, version) + " returned null", new NullPointerException());
		}
		for (int i = 0; i < parts.size(); i++) {
			if (parts.get(i) == null) {
				throw new JournalSerializationException(which(step, version) + " returned null",
						new NullPointerException());
			}
		}
		return parts;
	}

	private static String which(EventUpcaster step, int version) {
		return "Upcaster '" + step.name() + "' (kind '" + step.kind() + "', version " + version + ")";
	}

	/**
	 * Runs the chain of a snapshot or durable-state class on one stored value.
	 * @param tree the stored value; its version property is removed
	 * @param type the class it is read as
	 * @return the value at the version the chain reached
	 */
	Versioned upcastSnapshot(ObjectNode tree, Class<?> type) {
		ObjectNode current = tree;
		int at = takeVersion(tree);
		Map<Integer, UnaryOperator<ObjectNode>> chain = this.snapshots.getOrDefault(type, Map.of());
		UnaryOperator<ObjectNode> step;
		while ((step = chain.get(at)) != null) {
			try {
				current = Objects.requireNonNull(step.apply(current), "the step returned null");
			}
			catch (RuntimeException ex) {
				throw new JournalSerializationException("Snapshot upcaster of " + type.getName() + " (version " + at
						+ ") failed: " + ex, ex);
			}
			at++;
		}
		return new Versioned(current, at);
	}

	/** Removes the version property and returns the version it held (1 when absent). */
	static int takeVersion(ObjectNode tree) {
		JsonNode stamped = tree.remove(VERSION_PROPERTY);
		if (stamped == null) {
			return 1;
		}
		if (!stamped.isIntegralNumber() || stamped.asInt() < 1) {
			throw new JournalSerializationException("Stored payload has an invalid " + VERSION_PROPERTY + " property: "
					+ stamped, new IllegalArgumentException(String.valueOf(stamped)));
		}
		return stamped.asInt();
	}

	/** Collects upcasters and checks each chain when built. */
	public static final class Builder {

		private String typeProperty = "kind";

		private final Map<String, Map<Integer, EventUpcaster>> events = new HashMap<>();

		private final Map<Class<?>, Map<Integer, UnaryOperator<ObjectNode>>> snapshots = new HashMap<>();

		private Builder() {
		}

		/**
		 * @param typeProperty the JSON property naming an event's kind (its {@code @JsonTypeInfo} property);
		 * {@code kind} by default, as in the reference format
		 * @return this
		 */
		public Builder typeProperty(String typeProperty) {
			this.typeProperty = Objects.requireNonNull(typeProperty, "typeProperty");
			return this;
		}

		/**
		 * @param upcaster one step of an event kind's chain
		 * @return this
		 * @throws IllegalArgumentException if its version is below 1 or the kind already has a step from it
		 */
		public Builder add(EventUpcaster upcaster) {
			Objects.requireNonNull(upcaster, "upcaster");
			Objects.requireNonNull(upcaster.kind(), () -> "kind of upcaster " + upcaster.name());
			checkVersion(upcaster.fromVersion(), upcaster.name());
			EventUpcaster previous = this.events.computeIfAbsent(upcaster.kind(), (kind) -> new TreeMap<>())
				.putIfAbsent(upcaster.fromVersion(), upcaster);
			if (previous != null) {
				throw new IllegalArgumentException("Two upcasters read kind '" + upcaster.kind() + "' at version "
						+ upcaster.fromVersion() + ": " + previous.name() + " and " + upcaster.name());
			}
			return this;
		}

		/**
		 * @param upcasters steps of event kinds' chains
		 * @return this
		 */
		public Builder addAll(Iterable<? extends EventUpcaster> upcasters) {
			upcasters.forEach(this::add);
			return this;
		}

		/**
		 * @param stateType the snapshot or durable-state class the step applies to (the class it is read as)
		 * @param fromVersion the version the step reads; it returns the value at the next version
		 * @param step changes the stored JSON object; it may change it in place and return it
		 * @return this
		 */
		public Builder snapshot(Class<?> stateType, int fromVersion, UnaryOperator<ObjectNode> step) {
			Objects.requireNonNull(stateType, "stateType");
			Objects.requireNonNull(step, "step");
			checkVersion(fromVersion, "snapshot upcaster of " + stateType.getName());
			if (this.snapshots.computeIfAbsent(stateType, (type) -> new TreeMap<>()).putIfAbsent(fromVersion,
					step) != null) {
				throw new IllegalArgumentException("Two snapshot upcasters read " + stateType.getName() + " at version "
						+ fromVersion);
			}
			return this;
		}

		/**
		 * @return the chains
		 * @throws IllegalStateException if a chain has a gap, naming the kind or class and the missing version
		 */
		public Upcasters build() {
			this.events.forEach((kind, chain) -> checkContiguous("kind '" + kind + "'", chain));
			this.snapshots.forEach((type, chain) -> checkContiguous("snapshot class " + type.getName(), chain));
			return new Upcasters(this);
		}

		private static void checkVersion(int fromVersion, String name) {
			if (fromVersion < 1) {
				throw new IllegalArgumentException("Upcaster " + name + " reads version " + fromVersion
						+ "; versions start at 1");
			}
		}

		private static void checkContiguous(String what, Map<Integer, ?> chain) {
			int expected = -1;
			for (int version : chain.keySet()) {
				if (expected != -1 && version != expected) {
					throw new IllegalStateException("The upcaster chain of " + what + " has a gap: upcasters read versions "
							+ chain.keySet() + " but none reads version " + expected + " (add an upcaster from version "
							+ expected + " to " + (expected + 1) + ")");
				}
				expected = version + 1;
			}
		}
	}

}
