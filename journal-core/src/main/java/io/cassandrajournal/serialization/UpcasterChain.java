package io.cassandrajournal.serialization;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One kind's chain inside {@link Upcasters}: its steps in an array indexed by version from the first one the chain
 * reads (declared steps bound to the chains' type property), and for each version the plan a payload follows from
 * there to the end of its chain (following kind renames) when every step on the way is declared, computed once when
 * the chains are built; {@code null} when a general step comes on the way.
 */
final class UpcasterChain {

	private final int first;

	private final EventUpcaster[] steps;

	private final @Nullable Plan[] plans;

	UpcasterChain(Map<Integer, EventUpcaster> byVersion, String typeProperty) {
		this.first = byVersion.keySet().iterator().next();
		this.steps = new EventUpcaster[byVersion.size()];
		this.plans = new Plan[byVersion.size()];
		byVersion.forEach((version, step) -> this.steps[version - this.first] = (step instanceof PropertyUpcaster declared)
				? declared.forTypeProperty(typeProperty) : step);
	}

	@Nullable EventUpcaster step(int version) {
		int index = version - this.first;
		return (index >= 0 && index < this.steps.length) ? this.steps[index] : null;
	}

	@Nullable Plan plan(int version) {
		int index = version - this.first;
		return (index >= 0 && index < this.plans.length) ? this.plans[index] : null;
	}

	/** Computes the plan from each version, once every kind's chain exists (a renamed kind continues in another). */
	void computePlans(String kind, Map<String, UpcasterChain> chains) {
		for (int i = 0; i < this.steps.length; i++) {
			this.plans[i] = Plan.of(kind, this.first + i, chains);
		}
	}

	/**
	 * The declared steps a payload of one kind and version goes through, in order, and where they leave it.
	 * @param steps the steps, at least one
	 * @param endVersion the version the last one returns
	 * @param endKind the kind after the last one
	 */
	record Plan(List<PropertyUpcaster> steps, int endVersion, String endKind) {

		/** @return the plan from this kind and version, or {@code null} when a general step comes on the way */
		static @Nullable Plan of(String kind, int version, Map<String, UpcasterChain> chains) {
			List<PropertyUpcaster> steps = new ArrayList<>();
			String at = kind;
			int atVersion = version;
			while (true) {
				UpcasterChain chain = chains.get(at);
				EventUpcaster step = (chain != null) ? chain.step(atVersion) : null;
				if (step == null) {
					return new Plan(List.copyOf(steps), atVersion, at);
				}
				if (!(step instanceof PropertyUpcaster declared)) {
					return null;
				}
				steps.add(declared);
				at = declared.kindAfter();
				atVersion++;
			}
		}

	}

}
