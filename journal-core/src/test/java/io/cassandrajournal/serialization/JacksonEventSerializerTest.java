package io.cassandrajournal.serialization;

import java.io.Serializable;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.UnknownPayloadTypeException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the default serializer tells readers about stored types: the type to read a payload as for a wanted
 * type, and a typed exception for a type id it does not know.
 */
class JacksonEventSerializerTest {

	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
	@JsonSubTypes({ @JsonSubTypes.Type(value = Deposited.class, name = "deposited") })
	sealed interface Event permits Deposited {
	}

	record Deposited(long amount) implements Event, Serializable {
	}

	record State(long amount) {
	}

	private final JacksonEventSerializer serializer = new JacksonEventSerializer();

	@Test
	void aSubtypeIsReadAsItsTypeInfoRoot() {
		assertThat(this.serializer.readTypeFor(Deposited.class)).contains(Event.class);
		assertThat(this.serializer.readTypeFor(Event.class)).contains(Event.class);
	}

	@Test
	void storedTextAndGenericTreesTakeEveryPayload() {
		assertThat(this.serializer.readTypeFor(String.class)).contains(String.class);
		assertThat(this.serializer.readTypeFor(Object.class)).contains(Object.class);
		assertThat(this.serializer.deserialize("{\"kind\":\"deposited\",\"amount\":5}", Object.class))
			.isEqualTo(Map.of("kind", "deposited", "amount", 5));
	}

	@Test
	void noStoredTypeResolvesToATypeWithoutTypeInfo() {
		assertThat(this.serializer.readTypeFor(State.class)).isEmpty();
	}

	@Test
	void anUnknownTypeIdIsATypedException() {
		assertThatThrownBy(() -> this.serializer.deserialize("{\"kind\":\"closed\"}", Event.class))
			.isInstanceOf(UnknownPayloadTypeException.class);
		assertThatThrownBy(() -> this.serializer.deserialize("{\"kind\":", Event.class))
			.isInstanceOf(JournalSerializationException.class)
			.isNotInstanceOf(UnknownPayloadTypeException.class);
	}

}
