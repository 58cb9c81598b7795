package dev.lease.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Store addresses as each driver spells them: the credentials go, the host and database stay. */
class CredentialsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "jdbc:postgresql://db:5432/app?user=leaser&password=s3cret&ssl=true | jdbc:postgresql://db:5432/app?user=leaser&password=***&ssl=true",
        "jdbc:postgresql://leaser:s3cret@db:5432/app | jdbc:postgresql://***@db:5432/app",
        "jdbc:mysql://leaser:s3cret@db/app?sslMode=REQUIRED | jdbc:mysql://***@db/app?sslMode=REQUIRED",
        "jdbc:mariadb://db/app?user=leaser&password=s3cret | jdbc:mariadb://db/app?user=leaser&password=***",
        "jdbc:mysql://address=(host=db)(port=3306)(user=leaser)(password=s3cret)/app | jdbc:mysql://address=(host=db)(port=3306)(user=leaser)(password=***)/app",
        "jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={s3;cret};encrypt=true | jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=***;encrypt=true",
        "jdbc:oracle:thin:scott/tiger@//db:1521/orcl | jdbc:oracle:thin:***@//db:1521/orcl",
        "jdbc:oracle:thin:scott/tiger@db:1521:orcl | jdbc:oracle:thin:***@db:1521:orcl",
        "jdbc:h2:tcp://db/app;USER=sa;PASSWORD=s3cret;MODE=PostgreSQL | jdbc:h2:tcp://db/app;USER=sa;PASSWORD=***;MODE=PostgreSQL",
        "jdbc:db2://db:50000/app:user=leaser;password=s3cret; | jdbc:db2://db:50000/app:user=leaser;password=***;",
        "jdbc:postgresql://db/app?sslpassword=k3y&sslmode=verify-full | jdbc:postgresql://db/app?sslpassword=***&sslmode=verify-full",
        "redis://:s3cret@cache:6379/0 | redis://***@cache:6379/0",
        "rediss://default:s3cret@cache:6380 | rediss://***@cache:6380",
        "jdbc:snowflake://acct.snowflakecomputing.com/?private_key_file_pwd=s3cret&token=abc | jdbc:snowflake://acct.snowflakecomputing.com/?private_key_file_pwd=***&token=***",
        "Driver org.postgresql.Driver claims to not accept jdbcUrl, jdbc:postgresql://u:p@db/app?password=x | Driver org.postgresql.Driver claims to not accept jdbcUrl, jdbc:postgresql://***@db/app?password=***",
        "jdbc:postgresql://db:5432/app | jdbc:postgresql://db:5432/app",
        "jdbc:h2:mem:leases;DB_CLOSE_DELAY=-1 | jdbc:h2:mem:leases;DB_CLOSE_DELAY=-1",
    })
    void credentialsAreStrippedAndTheRestKept(String url, String redacted) {
        assertThat(Credentials.redact(url)).isEqualTo(redacted);
        assertThat(Credentials.redact(url)).doesNotContain("s3cret", "tiger", "k3y");
    }

    @org.junit.jupiter.api.Test
    void aDriverMessageQuotingAPieceOfTheUrlLosesTheSecretsOfThatUrlAndThePassword() {
        String url = "jdbc:h2:tcp://leaser:s3cret@127.0.0.1:1/mem:x;PASSWORD=0ther";
        assertThat(Credentials.redact("For input string: \"s3cret@127.0.0.1:1\", password 0ther, user pw hunter2", url,
                "hunter2", null, "")).isEqualTo("For input string: \"***@127.0.0.1:1\", password ***, user pw ***");
    }
}
