#include <catch2/catch.hpp>

CATCH_TEST_CASE( "compiles and runs" ) {
    CATCH_REQUIRE( true == !false );
}
