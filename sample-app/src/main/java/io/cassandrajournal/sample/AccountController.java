package io.cassandrajournal.sample;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.cassandrajournal.entity.EntityState;

/**
 * The account REST API.
 */
@RestController
public class AccountController {

	private final AccountService service;

	public AccountController(AccountService service) {
		this.service = service;
	}

	/**
	 * @param amount a positive whole amount
	 */
	public record AmountRequest(long amount) {
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
		return AccountView.of(id, this.service.open(id));
	}

	@PostMapping("/accounts/{id}/deposits")
	public AccountView deposit(@PathVariable String id, @RequestBody AmountRequest request) {
		return AccountView.of(id, this.service.deposit(id, positive(request)));
	}

	@PostMapping("/accounts/{id}/withdrawals")
	public AccountView withdraw(@PathVariable String id, @RequestBody AmountRequest request) {
		return AccountView.of(id, this.service.withdraw(id, positive(request)));
	}

	@GetMapping("/accounts/{id}")
	public AccountView get(@PathVariable String id) {
		return AccountView.of(id, this.service.get(id));
	}

	private static long positive(AmountRequest request) {
		if (request.amount() <= 0) {
			throw new IllegalArgumentException("amount must be a positive whole number, was " + request.amount());
		}
		return request.amount();
	}

}
