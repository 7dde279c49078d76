package io.cassandrajournal.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.cassandrajournal.spring.boot.projection.ProjectionDeclarationException;

/**
 * Turns a bad {@code @ProjectionHandler} declaration into a failure report naming the bean and method.
 */
final class ProjectionDeclarationFailureAnalyzer extends AbstractFailureAnalyzer<ProjectionDeclarationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, ProjectionDeclarationException cause) {
		return new FailureAnalysis(cause.getMessage(), "Fix the @ProjectionHandler annotation or the signature of "
				+ cause.beanName() + "." + cause.method() + " as described above.", cause);
	}

}
