package io.cassandrajournal.sample;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.sample.readmodel.AccountBalanceRepository;
import io.cassandrajournal.sample.readmodel.StatementRepository;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * How the API answers while Cassandra cannot be reached (issue 19 item 12): 503 with {@code Retry-After} and a
 * problem body that says whether the command may have been applied, logged once at WARN without a stack trace.
 * The outage itself on a real cluster is {@code LocalClusterProfileIT} (cluster profile); this test pins the HTTP
 * answer and the log, which that run only samples.
 */
@ExtendWith(OutputCaptureExtension.class)
class OutageAnswerTest {

	private final AccountService service = mock(AccountService.class);

	private MockMvc mvc;

	@BeforeEach
	void setUp() {
		this.mvc = MockMvcBuilders
			.standaloneSetup(new AccountController(this.service, mock(AccountBalanceRepository.class),
					mock(StatementRepository.class)))
			.setControllerAdvice(new ProblemHandler())
			.build();
	}

	@Test
	void anOutageIsA503ProblemWithRetryAfterLoggedOnceWithoutAStackTrace(CapturedOutput output) throws Exception {
		given(this.service.deposit(anyString(), anyLong())).willThrow(new JournalUnavailableException(
				"No node was available to execute the query", new IllegalStateException("all nodes down")));
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(post("/accounts/acc-1/deposits").contentType(MediaType.APPLICATION_JSON)
				.content("{\"amount\": 5}"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(header().string("Retry-After", "5"))
				.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
				.andExpect(jsonPath("$.status").value(503))
				.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("nothing was changed")));
		}
		assertThat(output.getAll().split("The journal is unavailable", -1)).as("one WARN for three requests")
			.hasSize(2);
		assertThat(output.getAll()).contains("WARN").doesNotContain("\tat ", "Exception in", "ERROR");
	}

	@Test
	void anUncertainWriteSaysItMayHaveBeenApplied() throws Exception {
		given(this.service.withdraw(anyString(), anyLong()))
			.willThrow(new JournalWriteUncertainException("account-acc-1", 3, 3,
					new IllegalStateException("write timed out")));
		this.mvc.perform(post("/accounts/acc-1/withdrawals").contentType(MediaType.APPLICATION_JSON)
			.content("{\"amount\": 5}"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "5"))
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("may or may not have been applied")));
	}

}
