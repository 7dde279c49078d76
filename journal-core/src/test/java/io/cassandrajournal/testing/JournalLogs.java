package io.cassandrajournal.testing;

import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

/**
 * What the journal logs while a test class runs: attached to the {@code io.cassandrajournal} logger by
 * {@link #capture()}, detached by {@link #close()} (a test class's {@code @BeforeAll} / {@code @AfterAll}).
 */
public final class JournalLogs implements AutoCloseable {

	private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

	private final Logger logger = (Logger) LoggerFactory.getLogger("io.cassandrajournal");

	private JournalLogs() {
		this.appender.start();
		this.logger.addAppender(this.appender);
	}

	/** @return the journal's log from now on, until {@link #close()} */
	public static JournalLogs capture() {
		return new JournalLogs();
	}

	/**
	 * @param what text the formatted message contains
	 * @param level the level
	 * @return the events logged so far at {@code level} whose message contains {@code what}
	 */
	public List<ILoggingEvent> about(String what, Level level) {
		return List.copyOf(this.appender.list)
			.stream()
			.filter((e) -> e.getLevel() == level && e.getFormattedMessage().contains(what))
			.toList();
	}

	@Override
	public void close() {
		this.logger.detachAppender(this.appender);
		this.appender.stop();
	}

}
