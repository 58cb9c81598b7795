package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.lease.LeaseConfigurationException;
import dev.lease.fence.Fence;
import dev.lease.fence.JdbcFence;

/** Mistakes in {@link FencedRequest} fail the startup, naming the handler and the fix. */
class FencedRequestStartupTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencedHttpAutoConfiguration.class));

    @Test
    void anUnknownParameterFailsTheStartupNamingTheRealOnes() {
        runner.withUserConfiguration(AnyFence.class, UnknownParameter.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(cause(context.getStartupFailure())).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("@FencedRequest on UnknownParameter.pay(long, String)")
                    .hasMessageContaining("refers to #id").hasMessageContaining("invoice (#p0), currency (#p1)");
        });
    }

    @Test
    void aBlankResourceFailsTheStartup() {
        runner.withUserConfiguration(AnyFence.class, BlankResource.class).run(context ->
                assertThat(cause(context.getStartupFailure())).hasMessageContaining("resource \" \" is refused"));
    }

    @Test
    void aJdbcFenceNeedsATransactionalHandler() {
        runner.withUserConfiguration(JdbcFenceBean.class, NotTransactional.class).run(context ->
                assertThat(cause(context.getStartupFailure()))
                        .hasMessageContaining("@FencedRequest on NotTransactional.pay(long)")
                        .hasMessageContaining("outside any transaction").hasMessageContaining("@Transactional"));
    }

    @Test
    void withoutAFenceTheStartupFails() {
        runner.withUserConfiguration(NotTransactional.class).run(context ->
                assertThat(cause(context.getStartupFailure())).hasMessageContaining("need(s) a Fence bean")
                        .hasMessageContaining("there is none"));
    }

    @Test
    void aPrivateHandlerFailsTheStartup() {
        runner.withUserConfiguration(AnyFence.class, PrivateHandler.class).run(context ->
                assertThat(cause(context.getStartupFailure())).hasMessageContaining("the method is private"));
    }

    /** The problem bodies need Jackson: without it the check cannot run, so a fenced handler must not run unfenced. */
    @Test
    void withoutJacksonAFencedHandlerFailsTheStartup() {
        runner.withClassLoader(new FilteredClassLoader("tools.jackson.databind"))
                .withUserConfiguration(AnyFence.class, NotTransactional.class).run(context ->
                        assertThat(cause(context.getStartupFailure()))
                                .hasMessageContaining("@FencedRequest on NotTransactional.pay(long) would never be checked")
                                .hasMessageContaining("Jackson"));
    }

    /** The exception that says what is wrong, however deep Spring wrapped it. */
    private static Throwable cause(Throwable failure) {
        assertThat(failure).as("startup failure").isNotNull();
        return org.springframework.core.NestedExceptionUtils.getMostSpecificCause(failure);
    }

    static class AnyFence {
        @Bean
        Fence fence() {
            return (resource, token) -> { };
        }
    }

    static class JdbcFenceBean {
        @Bean
        JdbcFence fence() {
            return new JdbcFence(new JdbcTemplate(new SimpleDriverDataSource(new org.h2.Driver(), "jdbc:h2:mem:x")));
        }
    }

    @RestController
    static class UnknownParameter {
        @PostMapping("/pay/{invoice}")
        @FencedRequest(resource = "payment-#{#id}")
        public String pay(@PathVariable long invoice, String currency) {
            return "paid";
        }
    }

    @RestController
    static class BlankResource {
        @PostMapping("/pay/{invoice}")
        @FencedRequest(resource = " ")
        public String pay(@PathVariable long invoice) {
            return "paid";
        }
    }

    @RestController
    static class NotTransactional {
        @PostMapping("/pay/{invoice}")
        @FencedRequest(resource = "payment-#{#invoice}")
        public String pay(@PathVariable long invoice) {
            return "paid";
        }
    }

    @RestController
    static class PrivateHandler {
        @FencedRequest(resource = "payment-1")
        private String pay() {
            return "paid";
        }
    }
}
