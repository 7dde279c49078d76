package io.cassandrajournal.benchmarks;

import java.nio.charset.StandardCharsets;

import org.apache.pekko.serialization.JSerializer;

import io.cassandrajournal.serialization.JacksonEventSerializer;

/**
 * Pekko serialization of the benchmark's event: the same JSON text as ours ({@link Bench#PAYLOAD}), written and
 * read by the same {@link JacksonEventSerializer}, so both sides store payloads of the same size and both
 * deserialize every event into the record on read.
 */
public final class PekkoJsonSerializer extends JSerializer {

	private final JacksonEventSerializer json = new JacksonEventSerializer();

	@Override
	public int identifier() {
		return 917_001;
	}

	@Override
	public boolean includeManifest() {
		return false;
	}

	@Override
	public byte[] toBinary(Object event) {
		return this.json.serialize(event).getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public Object fromBinaryJava(byte[] bytes, Class<?> manifest) {
		return this.json.deserialize(new String(bytes, StandardCharsets.UTF_8), AppendWorkloads.Deposited.class);
	}

}
