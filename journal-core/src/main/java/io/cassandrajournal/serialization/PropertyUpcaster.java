package io.cassandrajournal.serialization;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A declared upcaster step: it only renames, removes or adds top-level properties of the event, or renames its
 * kind. Because the library knows what it does, a chain made of such steps runs on the token stream between the
 * stored text and the deserializer, without building a JSON tree ({@link JacksonEventSerializer}); where a chain
 * also has a general {@link EventUpcaster} (a function on the tree), the step runs on the tree like any other.
 * <p>
 * Made with {@link EventUpcaster#renaming}, {@link EventUpcaster#removing}, {@link EventUpcaster#adding},
 * {@link EventUpcaster#renamingKind} or {@link EventUpcaster#properties}, and extended with the methods below, each
 * returning a new step (instances are immutable). What one step does, whatever the order of the calls:
 * <ul>
 * <li>a renamed property keeps its place and value under its new name; a property that already had the new name
 * is dropped;</li>
 * <li>a removed property is dropped;</li>
 * <li>an added property is set to its value, as the last properties of the event in the order added; a property
 * that already had that name is dropped;</li>
 * <li>a renamed kind replaces the value of the type property in place (the event continues with the upcasters of
 * its new kind, at the next version).</li>
 * </ul>
 * A name may take part in one change of a step only; the version property {@value Upcasters#VERSION_PROPERTY} and
 * the type property are not names a step may rename, remove or add (the kind changes with
 * {@link #renamingKind}). Only top-level properties are touched; nested objects pass through as they are.
 */
public final class PropertyUpcaster implements EventUpcaster {

	private final String kind;

	private final int fromVersion;

	private final String typeProperty;

	private final Map<String, String> renames;

	private final Set<String> removed;

	private final ObjectNode added;

	private final @Nullable String newKind;

	/** Every name this step drops where it stands: removed ones, and the names renames and additions give. */
	private final Set<String> dropped;

	/** The type property with the renamed kind, as an object whose property a parser hands out; null without one. */
	private final @Nullable ObjectNode kindProperty;

	private PropertyUpcaster(String kind, int fromVersion, String typeProperty, Map<String, String> renames,
			Set<String> removed, ObjectNode added, @Nullable String newKind) {
		this.kind = kind;
		this.fromVersion = fromVersion;
		this.typeProperty = typeProperty;
		this.renames = renames;
		this.removed = removed;
		this.added = added;
		this.newKind = newKind;
		Set<String> dropped = new LinkedHashSet<>(removed);
		dropped.addAll(renames.values());
		dropped.addAll(added.propertyNames());
		this.dropped = Set.copyOf(dropped);
		this.kindProperty = (newKind != null) ? JsonNodeFactory.instance.objectNode().put(typeProperty, newKind) : null;
	}

	static PropertyUpcaster of(String kind, int fromVersion) {
		Objects.requireNonNull(kind, "kind");
		return new PropertyUpcaster(kind, fromVersion, "kind", Map.of(), Set.of(), JsonNodeFactory.instance.objectNode(),
				null);
	}

	/**
	 * @param from the property to rename
	 * @param to its new name
	 * @return this step, also renaming {@code from} to {@code to}
	 * @throws IllegalArgumentException if either name already takes part in a change of this step, or is reserved
	 */
	public PropertyUpcaster renaming(String from, String to) {
		Objects.requireNonNull(from, "from");
		Objects.requireNonNull(to, "to");
		if (from.equals(to)) {
			throw new IllegalArgumentException("Upcaster " + name() + " renames '" + from + "' to itself");
		}
		checkFree(from);
		checkFree(to);
		Map<String, String> renames = new LinkedHashMap<>(this.renames);
		renames.put(from, to);
		return new PropertyUpcaster(this.kind, this.fromVersion, this.typeProperty, renames, this.removed, this.added,
				this.newKind);
	}

	/**
	 * @param names the properties to remove
	 * @return this step, also removing them
	 * @throws IllegalArgumentException if a name already takes part in a change of this step, or is reserved
	 */
	public PropertyUpcaster removing(String... names) {
		Set<String> removed = new LinkedHashSet<>(this.removed);
		for (String name : names) {
			checkFree(Objects.requireNonNull(name, "name"));
			if (!removed.add(name)) {
				throw new IllegalArgumentException("Upcaster " + name() + " removes '" + name + "' twice");
			}
		}
		return new PropertyUpcaster(this.kind, this.fromVersion, this.typeProperty, this.renames, removed, this.added,
				this.newKind);
	}

	/**
	 * @param name the property to add
	 * @param value its value (copied)
	 * @return this step, also setting {@code name} to {@code value}
	 * @throws IllegalArgumentException if the name already takes part in a change of this step, or is reserved
	 */
	public PropertyUpcaster adding(String name, JsonNode value) {
		Objects.requireNonNull(value, "value");
		checkFree(Objects.requireNonNull(name, "name"));
		ObjectNode added = this.added.deepCopy();
		added.set(name, value.deepCopy());
		return new PropertyUpcaster(this.kind, this.fromVersion, this.typeProperty, this.renames, this.removed, added,
				this.newKind);
	}

	/**
	 * @param name the property to add
	 * @param value its value
	 * @return this step, also setting {@code name} to {@code value}
	 * @throws IllegalArgumentException if the name already takes part in a change of this step, or is reserved
	 */
	public PropertyUpcaster adding(String name, String value) {
		return adding(name, JsonNodeFactory.instance.stringNode(Objects.requireNonNull(value, "value")));
	}

	/**
	 * @param name the property to add
	 * @param value its value
	 * @return this step, also setting {@code name} to {@code value}
	 * @throws IllegalArgumentException if the name already takes part in a change of this step, or is reserved
	 */
	public PropertyUpcaster adding(String name, long value) {
		return adding(name, JsonNodeFactory.instance.numberNode(value));
	}

	/**
	 * @param name the property to add
	 * @param value its value
	 * @return this step, also setting {@code name} to {@code value}
	 * @throws IllegalArgumentException if the name already takes part in a change of this step, or is reserved
	 */
	public PropertyUpcaster adding(String name, boolean value) {
		return adding(name, JsonNodeFactory.instance.booleanNode(value));
	}

	/**
	 * @param kind the kind the event has after this step
	 * @return this step, also renaming the kind
	 * @throws IllegalArgumentException if this step already renames the kind
	 */
	public PropertyUpcaster renamingKind(String kind) {
		Objects.requireNonNull(kind, "kind");
		if (this.newKind != null) {
			throw new IllegalArgumentException("Upcaster " + name() + " already renames the kind to '" + this.newKind + "'");
		}
		return new PropertyUpcaster(this.kind, this.fromVersion, this.typeProperty, this.renames, this.removed, this.added,
				kind);
	}

	private void checkFree(String name) {
		if (Upcasters.VERSION_PROPERTY.equals(name)) {
			throw new IllegalArgumentException("Upcaster " + name() + " names the reserved property " + name);
		}
		if (this.renames.containsKey(name) || this.renames.containsValue(name) || this.removed.contains(name)
				|| this.added.has(name)) {
			throw new IllegalArgumentException("Upcaster " + name() + " changes property '" + name
					+ "' twice; a name may take part in one change of a step");
		}
	}

	/**
	 * This step for the chains of an {@link Upcasters} whose type property is {@code typeProperty}.
	 * @throws IllegalStateException if the step renames, removes or adds the type property itself
	 */
	PropertyUpcaster forTypeProperty(String typeProperty) {
		if (this.renames.containsKey(typeProperty) || this.renames.containsValue(typeProperty)
				|| this.removed.contains(typeProperty) || this.added.has(typeProperty)) {
			throw new IllegalStateException("Upcaster " + name() + " renames, removes or adds the type property '"
					+ typeProperty + "'; rename the kind with renamingKind");
		}
		return typeProperty.equals(this.typeProperty) ? this : new PropertyUpcaster(this.kind, this.fromVersion,
				typeProperty, this.renames, this.removed, this.added, this.newKind);
	}

	@Override
	public String kind() {
		return this.kind;
	}

	@Override
	public int fromVersion() {
		return this.fromVersion;
	}

	/** @return the kind after this step: the renamed kind, or the kind it reads */
	String kindAfter() {
		return (this.newKind != null) ? this.newKind : this.kind;
	}

	String typeProperty() {
		return this.typeProperty;
	}

	/** @return {@code {"<type property>": "<new kind>"}} when this step renames the kind (not to be changed) */
	@Nullable ObjectNode kindProperty() {
		return this.kindProperty;
	}

	/** @return the new name of a renamed property, or {@code null} */
	@Nullable String renamed(String name) {
		return this.renames.get(name);
	}

	/** @return whether a property of this name is dropped where it stands */
	boolean drops(String name) {
		return this.dropped.contains(name);
	}

	/** @return the added properties, in order (not to be changed) */
	ObjectNode added() {
		return this.added;
	}

	boolean hasRenames() {
		return !this.renames.isEmpty();
	}

	/**
	 * The same change on the tree (when a chain also has a general step): a new object, the properties in the order
	 * the token stream gives them.
	 */
	@Override
	public List<ObjectNode> upcast(ObjectNode event) {
		ObjectNode out = event.objectNode();
		for (Map.Entry<String, JsonNode> property : new ArrayList<>(event.properties())) {
			String name = property.getKey();
			if (this.dropped.contains(name)) {
				continue;
			}
			String to = this.renames.get(name);
			if (to != null) {
				out.set(to, property.getValue());
			}
			else if (this.newKind != null && name.equals(this.typeProperty)) {
				out.put(name, this.newKind);
			}
			else {
				out.set(name, property.getValue());
			}
		}
		for (Map.Entry<String, JsonNode> property : this.added.properties()) {
			out.set(property.getKey(), property.getValue().deepCopy());
		}
		return List.of(out);
	}

	@Override
	public String name() {
		return this.kind + " v" + this.fromVersion + "->v" + (this.fromVersion + 1);
	}

	@Override
	public String toString() {
		return name() + " (renames " + this.renames + ", removes " + this.removed + ", adds " + this.added
				+ ((this.newKind != null) ? ", kind to '" + this.newKind + "'" : "") + ")";
	}

}
