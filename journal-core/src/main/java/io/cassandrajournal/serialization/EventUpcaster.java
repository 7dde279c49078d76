package io.cassandrajournal.serialization;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import tools.jackson.databind.node.ObjectNode;

/**
 * One step of an event kind's upcaster chain: reads a stored event of {@link #kind()} at version
 * {@link #fromVersion()} as a JSON tree and returns it at version {@code fromVersion() + 1}. The chain runs
 * step by step (v1 to v2 to v3) on every read of an event, before Jackson binds the tree; stored events are
 * never rewritten.
 * <p>
 * A step may change the type property (a rename: the result continues with the upcasters of its new kind,
 * at the next version), return several events (a split: each part continues on its own; all parts carry the
 * stored event's sequence number and tag offset), or none (the event is dropped on read). A step that throws
 * fails the read of that event, naming the upcaster.
 * <p>
 * Implementations must be thread-safe. Register them with {@link Upcasters.Builder#add(EventUpcaster)}; the
 * Spring Boot starter picks up every {@code EventUpcaster} bean.
 * <p>
 * A step that only renames, removes or adds top-level properties, or renames the kind, can be declared instead of
 * written as a function ({@link #renaming}, {@link #removing}, {@link #adding}, {@link #renamingKind},
 * {@link #properties}, each giving a {@link PropertyUpcaster} that the others' methods extend): a chain of declared
 * steps runs on the token stream without building a tree, so upcasting costs about what binding costs.
 */
public interface EventUpcaster {

	/** @return the value of the type property (for example {@code kind}) of the events this step reads */
	String kind();

	/** @return the version this step reads; it returns events at the next version */
	int fromVersion();

	/**
	 * @param event the stored event at {@link #fromVersion()}, without the version property; the step may
	 * change it in place and return it
	 * @return the event at the next version, or the parts it splits into, in order
	 * @throws RuntimeException when the event cannot be upcast: the read of the event fails
	 */
	List<ObjectNode> upcast(ObjectNode event);

	/** @return the name error messages give this step; the class name by default */
	default String name() {
		return getClass().getName();
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @param step turns one event into one event (it may rename the kind)
	 * @return the step, named {@code kind vN->vN+1}
	 */
	static EventUpcaster of(String kind, int fromVersion, UnaryOperator<ObjectNode> step) {
		Objects.requireNonNull(step, "step");
		return splitting(kind, fromVersion, (event) -> List.of(step.apply(event)));
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @return a declared step that changes nothing yet (extend it with {@link PropertyUpcaster}'s methods), named
	 * {@code kind vN->vN+1}
	 */
	static PropertyUpcaster properties(String kind, int fromVersion) {
		return PropertyUpcaster.of(kind, fromVersion);
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @param from the top-level property to rename
	 * @param to its new name (a property of that name is dropped)
	 * @return the declared step, named {@code kind vN->vN+1}
	 */
	static PropertyUpcaster renaming(String kind, int fromVersion, String from, String to) {
		return properties(kind, fromVersion).renaming(from, to);
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @param names the top-level properties to remove
	 * @return the declared step, named {@code kind vN->vN+1}
	 */
	static PropertyUpcaster removing(String kind, int fromVersion, String... names) {
		return properties(kind, fromVersion).removing(names);
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @param name the top-level property to set (added as the last one; a property of that name is dropped)
	 * @param value its value
	 * @return the declared step, named {@code kind vN->vN+1}
	 */
	static PropertyUpcaster adding(String kind, int fromVersion, String name, String value) {
		return properties(kind, fromVersion).adding(name, value);
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @param newKind the kind the event has after the step; it continues with that kind's upcasters, at the next
	 * version
	 * @return the declared step, named {@code kind vN->vN+1}
	 */
	static PropertyUpcaster renamingKind(String kind, int fromVersion, String newKind) {
		return properties(kind, fromVersion).renamingKind(newKind);
	}

	/**
	 * @param kind the kind the step reads
	 * @param fromVersion the version the step reads
	 * @param step turns one event into its parts, in order
	 * @return the step, named {@code kind vN->vN+1}
	 */
	static EventUpcaster splitting(String kind, int fromVersion, Function<ObjectNode, List<ObjectNode>> step) {
		Objects.requireNonNull(kind, "kind");
		Objects.requireNonNull(step, "step");
		return new EventUpcaster() {

			@Override
			public String kind() {
				return kind;
			}

			@Override
			public int fromVersion() {
				return fromVersion;
			}

			@Override
			public List<ObjectNode> upcast(ObjectNode event) {
				return step.apply(event);
			}

			@Override
			public String name() {
				return kind + " v" + fromVersion + "->v" + (fromVersion + 1);
			}

			@Override
			public String toString() {
				return name();
			}

		};
	}

}
