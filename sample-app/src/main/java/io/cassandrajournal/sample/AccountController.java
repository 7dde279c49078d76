package io.cassandrajournal.sample;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

import io.cassandrajournal.entity.EntityState;
import io.cassandrajournal.sample.readmodel.AccountBalanceRepository;
import io.cassandrajournal.sample.readmodel.StatementRepository;

/**
 * The account REST API.
 */
@RestController
public class AccountController {

	private final AccountService service;

	private final AccountBalanceRepository balances;

	private final StatementRepository statements;

	public AccountController(AccountService service, AccountBalanceRepository balances, StatementRepository statements) {
		this.service = service;
		this.balances = balances;
		this.statements = statements;
	}

	/**
	 * @param amount a positive whole amount, as a JSON integer that fits in a signed 64-bit number; read as a tree
	 * so that a fraction, an exponent or a string is rejected instead of being coerced
	 */
	public record AmountRequest(@Nullable JsonNode amount) {
	}

	/**
	 * @param id the account id
	 * @param balance its balance
	 */
	public record AccountView(String id, long balance) {

		static AccountView of(String id, EntityState<Account.State> state) {
			return new AccountView(id, state.state().balance());
		}

	}

	@PostMapping("/accounts/{id}")
	@ResponseStatus(HttpStatus.CREATED)
	public AccountView open(@PathVariable String id) {
		return AccountView.of(id, this.service.open(AccountIds.check(id)));
	}

	@PostMapping("/accounts/{id}/deposits")
	public AccountView deposit(@PathVariable String id, @RequestBody AmountRequest request) {
		return AccountView.of(id, this.service.deposit(AccountIds.check(id), Amounts.positive(request)));
	}

	@PostMapping("/accounts/{id}/withdrawals")
	public AccountView withdraw(@PathVariable String id, @RequestBody AmountRequest request) {
		return AccountView.of(id, this.service.withdraw(AccountIds.check(id), Amounts.positive(request)));
	}

	/**
	 * @param id the account
	 * @return its balance from the read model (eventually consistent: a few milliseconds behind the journal)
	 */
	@GetMapping("/accounts/{id}")
	public AccountView get(@PathVariable String id) {
		return this.balances.findById(id)
			.map((row) -> new AccountView(id, row.getBalance()))
			.orElseThrow(() -> new AccountExceptions.NotFound(id));
	}

	/**
	 * @param id the account
	 * @return its statement lines in order, from the read model
	 */
	@GetMapping("/accounts/{id}/statement")
	public List<StatementLine> statement(@PathVariable String id) {
		List<StatementLine> lines = this.statements.findByAccountId(id)
			.stream()
			.map((e) -> new StatementLine(e.getSequenceNr(), e.getKind(), e.getAmount(), e.getAt().toString()))
			.toList();
		if (lines.isEmpty()) {
			throw new AccountExceptions.NotFound(id);
		}
		return lines;
	}

	/** @return every account's balance, from the read model (at most 1,000) */
	@GetMapping("/accounts")
	public List<AccountView> list() {
		return this.balances.findAll(org.springframework.data.domain.PageRequest.of(0, 1000))
			.stream()
			.map((row) -> new AccountView(row.getAccountId(), row.getBalance()))
			.toList();
	}

	/**
	 * @param sequenceNr the event's position in the account's stream
	 * @param kind opened, deposited or withdrawn
	 * @param amount the amount (0 for opened)
	 * @param at when it happened
	 */
	public record StatementLine(long sequenceNr, String kind, long amount, String at) {
	}

}
