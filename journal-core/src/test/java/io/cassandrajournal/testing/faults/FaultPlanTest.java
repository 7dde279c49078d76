package io.cassandrajournal.testing.faults;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.testing.faults.FaultPlan.Decision;
import io.cassandrajournal.testing.faults.FaultPlan.Kind;
import io.cassandrajournal.testing.faults.FaultPlan.StatementClass;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class FaultPlanTest {

	private static List<Decision> decisions(long seed, StatementClass statementClass, int n) {
		FaultPlan plan = new FaultPlan(seed, FaultPlan.Rates.defaults());
		plan.arm();
		List<Decision> decided = new ArrayList<>();
		for (int i = 0; i < n; i++) {
			decided.add(plan.decide(statementClass));
		}
		return decided;
	}

	@Test
	void theSameSeedGivesTheSameDecisions() {
		assertThat(decisions(7, StatementClass.BATCH, 5000)).isEqualTo(decisions(7, StatementClass.BATCH, 5000));
		assertThat(decisions(7, StatementClass.BATCH, 5000)).isNotEqualTo(decisions(8, StatementClass.BATCH, 5000));
	}

	@Test
	void eachClassGetsItsKindsAtTheirRates() {
		int n = 200_000;
		Map<Kind, Integer> batch = count(decisions(3, StatementClass.BATCH, n));
		assertThat(batch).containsOnlyKeys(Kind.FAIL_BEFORE_SENDING, Kind.APPLY_THEN_TIMEOUT_BATCH, Kind.LATE_BATCH,
				Kind.SLOW_RESPONSE);
		assertThat(batch.get(Kind.APPLY_THEN_TIMEOUT_BATCH) / (double) n).isCloseTo(0.02, within(0.002));
		assertThat(batch.get(Kind.LATE_BATCH) / (double) n).isCloseTo(0.01, within(0.002));
		assertThat(count(decisions(3, StatementClass.READ, n))).containsOnlyKeys(Kind.FAIL_BEFORE_SENDING,
				Kind.READ_FAILS, Kind.SLOW_RESPONSE);
		Map<Kind, Integer> claim = count(decisions(3, StatementClass.CLAIM, n));
		assertThat(claim).containsKeys(Kind.APPLY_THEN_TIMEOUT_CLAIM, Kind.CONNECTION_LOST_CLAIM)
			.doesNotContainKeys(Kind.READ_FAILS, Kind.LATE_BATCH, Kind.APPLY_THEN_TIMEOUT_BATCH);
		assertThat(claim.get(Kind.CONNECTION_LOST_CLAIM) / (double) n).isCloseTo(0.005, within(0.001));
		assertThat(batch).doesNotContainKey(Kind.CONNECTION_LOST_CLAIM);
		assertThat(count(decisions(3, StatementClass.CAS_SAVE, n))).containsKey(Kind.APPLY_THEN_TIMEOUT_CAS_SAVE);
	}

	@Test
	void aDisarmedPlanInjectsNothingAndCountsWhatItInjected() {
		FaultPlan plan = new FaultPlan(1, FaultPlan.Rates.defaults());
		assertThat(plan.decide(StatementClass.WRITE)).isNull();
		assertThat(plan.decisions()).isZero();
		plan.arm();
		int injected = 0;
		for (int i = 0; i < 10_000; i++) {
			injected += (plan.decide(StatementClass.WRITE) != null) ? 1 : 0;
		}
		assertThat(plan.injected().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(injected);
		assertThat(plan.decisions()).isEqualTo(10_000);
	}

	private static Map<Kind, Integer> count(List<Decision> decisions) {
		Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
		for (Decision decision : decisions) {
			if (decision != null) {
				counts.merge(decision.kind(), 1, Integer::sum);
			}
		}
		return counts;
	}

}
