package io.cassandrajournal.spring.boot.it;

import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.cassandrajournal.testsupport.SharedCassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A real start of an application with a configuration mistake ends in Spring Boot's failure report naming the
 * property to set, not in a stack trace (issue 19 item 7; the analyzers' wording is unit-tested in
 * {@code FailureAnalyzersTest}).
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupReportsIT {

	@Test
	void anUnsetKeyspaceFailsStartUpWithAReportThatNamesTheProperty(CapturedOutput output) {
		InetSocketAddress point = SharedCassandra.contactPoints().get(0);
		SpringApplication application = new SpringApplication(StarterTestApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run(
				"--spring.cassandra.contact-points=" + point.getHostString() + ":" + point.getPort(),
				"--spring.cassandra.local-datacenter=datacenter1"));
		assertThat(output.getAll()).contains("APPLICATION FAILED TO START")
			.contains("journal.cassandra.keyspace")
			.as("the report replaces the stack trace Spring Boot logs for an unexplained failure")
			.doesNotContain("Application run failed");
	}

}
