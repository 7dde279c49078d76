package io.cassandrajournal.benchmarks;

import java.util.List;

/**
 * One workload measured on every side in the same rounds, the order rotating: ours, the raw driver sending what
 * ours sends, the Pekko peer, and (for appends) the raw driver sending what the peer sends.
 *
 * @param name workload name ({@code pekko-} and the name of our workload it mirrors)
 * @param unit {@code ops/s} or {@code events/s}
 * @param ours our figure of each round
 * @param raw the raw driver's figure of each round, sending what ours sends
 * @param peer the peer's figure of each round
 * @param peerRaw the raw driver's figure of each round sending what the peer sends (empty where not measured)
 * @param note what each side does
 */
record PeerResult(String name, String unit, List<Double> ours, List<Double> raw, List<Double> peer,
		List<Double> peerRaw, String note) {

	double oursMedian() {
		return Stats.median(this.ours);
	}

	double rawMedian() {
		return Stats.median(this.raw);
	}

	double peerMedian() {
		return Stats.median(this.peer);
	}

	/** @return ours/peer: above 1.0 ours is faster */
	double oursToPeer() {
		return oursMedian() / peerMedian();
	}

}
