/* Served by evalua view: no data embedded (the app asks the API). evalua view --export replaces this file with the data. */
window.EVALUA_DATA = null;
