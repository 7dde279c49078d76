package io.cassandrajournal.internal;

import java.nio.ByteBuffer;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RowValuesTest {

	private static ByteBuffer encoded(Set<String> set) {
		return TypeCodecs.setOf(TypeCodecs.TEXT).encode(set, ProtocolVersion.V5);
	}

	@Test
	void decodesWhatTheDriversCodecEncodesIntoAnImmutableSet() {
		for (Set<String> set : List.of(Set.<String>of(), Set.of("orders"), new LinkedHashSet<>(List.of("a", "b", "c")),
				Set.of("über", "日本", "\uD83D\uDE00 emoji", ""))) {
			Set<String> decoded = RowValues.textSet(encoded(set), ProtocolVersion.V5);
			assertThat(decoded).isEqualTo(set);
			assertThatThrownBy(() -> decoded.add("x")).isInstanceOf(UnsupportedOperationException.class);
			// An immutable set passes PersistentEvent's Set.copyOf without a copy.
			assertThat(Set.copyOf(decoded)).isSameAs(decoded);
		}
	}

	@Test
	void readsFromTheBuffersPositionWithoutMovingIt() {
		ByteBuffer inner = encoded(Set.of("x", "y"));
		ByteBuffer outer = ByteBuffer.allocate(inner.remaining() + 7);
		outer.position(7);
		outer.put(inner);
		outer.position(7);
		ByteBuffer slice = outer.duplicate();
		assertThat(RowValues.textSet(slice, ProtocolVersion.V5)).containsExactlyInAnyOrder("x", "y");
		assertThat(slice.position()).isEqualTo(7);
		ByteBuffer direct = ByteBuffer.allocateDirect(inner.rewind().remaining()).put(inner).flip();
		assertThat(RowValues.textSet(direct, ProtocolVersion.V5)).containsExactlyInAnyOrder("x", "y");
	}

	@Test
	void decodesTextAsTheDriversCodecDoesWithoutMovingTheBuffer() {
		for (String value : List.of("", "orders-1", "über", "日本", "\uD83D\uDE00 emoji", "{\"amount\":25}")) {
			ByteBuffer encoded = TypeCodecs.TEXT.encode(value, ProtocolVersion.V5);
			ByteBuffer outer = ByteBuffer.allocate(encoded.remaining() + 3);
			outer.position(3);
			outer.put(encoded.duplicate());
			outer.position(3);
			assertThat(RowValues.text(outer, ProtocolVersion.V5))
				.isEqualTo(TypeCodecs.TEXT.decode(encoded, ProtocolVersion.V5))
				.isEqualTo(value);
			assertThat(outer.position()).isEqualTo(3);
			ByteBuffer direct = ByteBuffer.allocateDirect(encoded.remaining()).put(encoded.duplicate()).flip();
			assertThat(RowValues.text(direct, ProtocolVersion.V5)).isEqualTo(value);
		}
		assertThat(RowValues.text(null, ProtocolVersion.V5)).isNull();
	}

	/**
	 * Invalid UTF-8 fails as it did through the driver's codec (an {@code IllegalArgumentException}), rather than
	 * reading as U+FFFD: a persistenceId altered that way would name another entity and break the UTF-8 order of
	 * offsets. A genuine U+FFFD decodes as itself.
	 */
	@Test
	void invalidUtf8FailsAsInTheDriversCodec() {
		byte[][] invalid = { { (byte) 0xC3 }, { 'a', (byte) 0xFF, 'b' }, { (byte) 0xC0, (byte) 0x80 },
				{ (byte) 0xED, (byte) 0xA0, (byte) 0x80 } };
		for (byte[] bytes : invalid) {
			assertThatThrownBy(() -> TypeCodecs.TEXT.decode(ByteBuffer.wrap(bytes), ProtocolVersion.V5))
				.isInstanceOf(IllegalArgumentException.class);
			assertThatThrownBy(() -> RowValues.text(ByteBuffer.wrap(bytes), ProtocolVersion.V5))
				.isInstanceOf(IllegalArgumentException.class);
			ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
			assertThatThrownBy(() -> RowValues.text(direct, ProtocolVersion.V5))
				.isInstanceOf(IllegalArgumentException.class);
		}
		for (String value : List.of("\uFFFD", "a\uFFFDb", "orders-\uFFFD-1")) {
			ByteBuffer encoded = TypeCodecs.TEXT.encode(value, ProtocolVersion.V5);
			assertThat(RowValues.text(encoded, ProtocolVersion.V5)).isEqualTo(value);
		}
	}

	/**
	 * A tag set fails on invalid UTF-8 as {@link RowValues#text} does (it used to read it as U+FFFD, a tag the event
	 * was never written with); a genuine U+FFFD in a tag decodes as itself.
	 */
	@Test
	void invalidUtf8InATagSetFailsAsInTheDriversCodec() {
		byte[][] invalid = { { (byte) 0xC3 }, { 'a', (byte) 0xFF, 'b' }, { (byte) 0xC0, (byte) 0x80 },
				{ (byte) 0xED, (byte) 0xA0, (byte) 0x80 } };
		for (byte[] bytes : invalid) {
			ByteBuffer set = ByteBuffer.allocate(4 + 4 + 1 + 4 + bytes.length);
			set.putInt(2).putInt(1).put((byte) 'x').putInt(bytes.length).put(bytes).flip();
			assertThatThrownBy(() -> TypeCodecs.setOf(TypeCodecs.TEXT).decode(set.duplicate(), ProtocolVersion.V5))
				.isInstanceOf(IllegalArgumentException.class);
			assertThatThrownBy(() -> RowValues.textSet(set.duplicate(), ProtocolVersion.V5))
				.isInstanceOf(IllegalArgumentException.class);
		}
		assertThat(RowValues.textSet(encoded(Set.of("\uFFFD", "a\uFFFDb")), ProtocolVersion.V5))
			.containsExactlyInAnyOrder("\uFFFD", "a\uFFFDb");
	}

	@Test
	void nullAndEmptyAreTheEmptySet() {
		assertThat(RowValues.textSet(null, ProtocolVersion.V5)).isEmpty();
		assertThat(RowValues.textSet(ByteBuffer.allocate(0), ProtocolVersion.V5)).isEmpty();
	}

}
